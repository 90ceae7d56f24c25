#!/usr/bin/env bash
# gpu.sh — kc against PyTorch on an NVIDIA GPU (H100, H200): builds a slim
# kc, runs `kc bench` through Vulkan (and through CUDA when libkcrt has that
# backend and the bundle has sm_XX variants), runs the same operations at the
# same shapes through PyTorch (cuBLAS, cuDNN), and prints one table of
# kc / PyTorch time ratios (bench/torch_compare.py). docs/benchmarks.md,
# "On an NVIDIA GPU", tells the whole story.
#
#   bench/gpu.sh [--out DIR] [--package DIR | --bundle FILE [--calibration-bundle FILE]]
#                [--tune N] [--repeat N] [--deps DIR] [--fetch-only]
#
#   --out DIR       where everything goes (default: build-gpu)
#   --package DIR   the kernel package to build and measure (default: kernels/,
#                   the shipped RVC/TTS package; bench/kernels for kc's own)
#   --bundle FILE   measure this bundle instead (e.g. one built elsewhere with
#                   `kc build kernels -t spirv -t sm_90`: the slim kc has no LLVM,
#                   so it cannot make CUDA variants itself)
#   --calibration-bundle FILE  kc bench's calibration kernels for CUDA, built
#                   elsewhere too (`kc build bench/calibrate --all-variants -t sm_90`);
#                   without it there is no CUDA column
#   --tune N        `kc tune` each kernel with a budget of N variants first, so that
#                   kc bench measures the tuned choice (default: 0, the defaults)
#   --repeat N      kc bench rounds (default 15) and PyTorch repeats (x4)
#   --deps DIR      source tarballs of the dependencies (default: DIR/deps-src under
#                   --out); what is missing there is downloaded when the network
#                   allows
#   --fetch-only    only download the tarballs into --deps (on a machine with a
#                   network, for a GPU machine without one), then stop
#
# Needs: a C compiler, CMake >= 3.20, python3, the NVIDIA driver (its Vulkan
# ICD), and for the comparison PyTorch with CUDA. No distribution packages:
# what kc needs and the machine lacks (pkg-config, SQLite, libyaml, jansson,
# zlib, the Vulkan and SPIR-V headers, the Vulkan loader) is built from
# source into --out/deps, statically where it links into kc (SQLite is
# compiled from its amalgamation into a static library). kc itself is built
# without LLVM and without SPIRV-Tools (-DKC_WITH_LLVM=OFF
# -DKC_WITH_SPIRV_TOOLS=OFF): the SPIR-V path only.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$root/build-gpu
package=$root/kernels
bundle=""
calib=""
tune=0
repeat=15
deps_src=""
fetch_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    --package) package=$(cd "$2" && pwd); shift 2 ;;
    --bundle) bundle=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --calibration-bundle) calib=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --tune) tune=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --deps) deps_src=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    --fetch-only) fetch_only=1; shift ;;
    -h | --help) sed -n '2,39p' "$0"; exit 0 ;;
    *) echo "gpu.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
deps_src=${deps_src:-$out/deps-src}
prefix=$out/deps
jobs=$(nproc 2>/dev/null || echo 4)
mkdir -p "$deps_src" "$prefix"
trap 'echo "gpu.sh: failed at line $LINENO; the logs are in $out (deps.log, kc-cmake.log, kc-build.log)" >&2' ERR
say() { printf '\n== %s\n' "$*"; }

# ---- the dependencies: name, tarball, URL ------------------------------------
# Pinned versions; any later release builds the same way.
tarballs=(
    "pkgconf pkgconf-2.1.1.tar.xz https://distfiles.ariadne.space/pkgconf/pkgconf-2.1.1.tar.xz"
    "sqlite sqlite-autoconf-3450300.tar.gz https://www.sqlite.org/2024/sqlite-autoconf-3450300.tar.gz"
    "yaml yaml-0.2.5.tar.gz https://github.com/yaml/libyaml/releases/download/0.2.5/yaml-0.2.5.tar.gz"
    "jansson jansson-2.14.tar.gz https://github.com/akheron/jansson/releases/download/v2.14/jansson-2.14.tar.gz"
    "zlib zlib-1.3.1.tar.gz https://github.com/madler/zlib/releases/download/v1.3.1/zlib-1.3.1.tar.gz"
    "vulkan-headers Vulkan-Headers-1.3.283.tar.gz https://github.com/KhronosGroup/Vulkan-Headers/archive/refs/tags/v1.3.283.tar.gz"
    "spirv-headers SPIRV-Headers-vulkan-sdk-1.3.283.0.tar.gz https://github.com/KhronosGroup/SPIRV-Headers/archive/refs/tags/vulkan-sdk-1.3.283.0.tar.gz"
    "vulkan-loader Vulkan-Loader-1.3.283.tar.gz https://github.com/KhronosGroup/Vulkan-Loader/archive/refs/tags/v1.3.283.tar.gz"
)

tarball_of() { for t in "${tarballs[@]}"; do set -- $t; [ "$1" = "$want" ] && echo "$2" && return; done; }
url_of() { for t in "${tarballs[@]}"; do set -- $t; [ "$1" = "$want" ] && echo "$3" && return; done; }

fetch() { # $1: name; leaves the tarball in $deps_src
    local want=$1 file url
    file=$(tarball_of) url=$(url_of)
    [ -s "$deps_src/$file" ] && return 0
    echo "gpu.sh: fetching $file"
    if command -v curl >/dev/null; then curl -fsSL --retry 2 -o "$deps_src/$file.part" "$url"
    elif command -v wget >/dev/null; then wget -q -O "$deps_src/$file.part" "$url"
    else python3 -c "import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])" "$url" "$deps_src/$file.part"
    fi || { rm -f "$deps_src/$file.part"; echo "gpu.sh: cannot download $url: put $file into $deps_src (bench/gpu.sh --fetch-only on a machine with a network)" >&2; exit 1; }
    mv "$deps_src/$file.part" "$deps_src/$file"
}

unpack() { # $1: name; prints the source directory
    local want=$1 file dir
    file=$(tarball_of)
    fetch "$1" >&2
    dir=$out/src/$1
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir"
        tar -xf "$deps_src/$file" -C "$dir" --strip-components=1
    fi
    echo "$dir"
}

if [ "$fetch_only" = 1 ]; then
    for t in "${tarballs[@]}"; do set -- $t; fetch "$1"; done
    echo "gpu.sh: the tarballs are in $deps_src; copy it with the kc tree and give --deps"
    exit 0
fi

export PATH=$prefix/bin:$PATH
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/share/pkgconfig:${PKG_CONFIG_PATH:-}
export CMAKE_PREFIX_PATH=$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
# KC_GPU_FORCE="pkgconf yaml …" builds those from source even where the
# machine has them (to test this script on a machine that has everything).
forced() { case " ${KC_GPU_FORCE:-} " in *" $1 "*) return 0 ;; esac; return 1; }
have_pc() { ! forced "$2" && command -v pkg-config >/dev/null && pkg-config --exists "$1" 2>/dev/null; }
have_header() { ! forced "$2" && printf '#include <%s>\n' "$1" | cc -E -I"$prefix/include" -x c - >/dev/null 2>&1; }

static_lib() { # $1: name: ./configure when the tarball has one (releases do), else CMake
    local src
    src=$(unpack "$1")
    if [ -x "$src/configure" ]; then
        (cd "$src" && ./configure --prefix="$prefix" --disable-shared --enable-static --with-pic >>"$log" 2>&1 &&
            make -j"$jobs" >>"$log" 2>&1 && make install >>"$log" 2>&1)
    else
        cmake -S "$src" -B "$src/build" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release \
            -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_TESTING=OFF \
            -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON >>"$log" 2>&1
        cmake --build "$src/build" -j "$jobs" >>"$log" 2>&1 && cmake --install "$src/build" >>"$log" 2>&1
    fi
}

say "dependencies (built into $prefix where this machine lacks them; their output in deps.log)"
log=$out/deps.log
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/bin"
if forced pkgconf || ! command -v pkg-config >/dev/null; then
    echo "pkg-config: building pkgconf"
    static_lib pkgconf
    ln -sf pkgconf "$prefix/bin/pkg-config"
fi
if ! have_pc sqlite3 sqlite; then
    echo "sqlite3: a static library from the amalgamation"
    src=$(unpack sqlite)
    cc -O2 -fPIC -DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -c "$src/sqlite3.c" -o "$out/src/sqlite3.o"
    ar rcs "$prefix/lib/libsqlite3.a" "$out/src/sqlite3.o"
    cp "$src/sqlite3.h" "$src/sqlite3ext.h" "$prefix/include/"
    printf 'prefix=%s\nName: SQLite\nDescription: SQLite (static)\nVersion: 3.45.3\nLibs: -L${prefix}/lib -lsqlite3 -lpthread -lm\nCflags: -I${prefix}/include\n' \
        "$prefix" >"$prefix/lib/pkgconfig/sqlite3.pc"
fi
if ! have_pc yaml-0.1 yaml; then
    echo "libyaml: static"
    static_lib yaml
    # libyaml's CMake build writes no pkg-config file
    [ -e "$prefix/lib/pkgconfig/yaml-0.1.pc" ] ||
        printf 'prefix=%s\nName: yaml\nDescription: libyaml (static)\nVersion: 0.2.5\nLibs: -L${prefix}/lib -lyaml\nCflags: -I${prefix}/include\n' \
            "$prefix" >"$prefix/lib/pkgconfig/yaml-0.1.pc"
fi
have_pc jansson jansson || { echo "jansson: static"; static_lib jansson; }
if ! have_pc zlib zlib; then
    echo "zlib: static"
    src=$(unpack zlib)
    (cd "$src" && ./configure --prefix="$prefix" --static >>"$log" 2>&1 && make -j"$jobs" >>"$log" 2>&1 && make install >>"$log" 2>&1)
fi
if ! have_header vulkan/vulkan.h vulkan-headers; then
    echo "Vulkan headers"
    src=$(unpack vulkan-headers)
    cmake -S "$src" -B "$out/src/vulkan-headers-build" -DCMAKE_INSTALL_PREFIX="$prefix" >>"$log" 2>&1
    cmake --install "$out/src/vulkan-headers-build" >>"$log" 2>&1
fi
if ! have_header spirv/unified1/spirv.h spirv-headers; then
    echo "SPIR-V headers"
    src=$(unpack spirv-headers)
    cmake -S "$src" -B "$out/src/spirv-headers-build" -DCMAKE_INSTALL_PREFIX="$prefix" >>"$log" 2>&1
    cmake --install "$out/src/spirv-headers-build" >>"$log" 2>&1
fi
# The Vulkan loader is loaded at run time (dlopen): the system's if it has one.
if forced vulkan-loader || ! { ldconfig -p 2>/dev/null | grep 'libvulkan.so.1 ' >/dev/null; } && [ ! -e "$prefix/lib/libvulkan.so.1" ]; then
    echo "Vulkan loader (libvulkan.so.1)"
    src=$(unpack vulkan-loader)
    cmake -S "$src" -B "$out/src/vulkan-loader-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
        -DVULKAN_HEADERS_INSTALL_DIR="$prefix" -DBUILD_WSI_XCB_SUPPORT=OFF -DBUILD_WSI_XLIB_SUPPORT=OFF \
        -DBUILD_WSI_WAYLAND_SUPPORT=OFF -DBUILD_TESTS=OFF >>"$log" 2>&1
    cmake --build "$out/src/vulkan-loader-build" -j "$jobs" >>"$log" 2>&1
    cmake --install "$out/src/vulkan-loader-build" >>"$log" 2>&1
fi
[ -e "$prefix/lib/libvulkan.so.1" ] && export KCRT_VULKAN_LIBRARY=$prefix/lib/libvulkan.so.1
# NVIDIA's Vulkan driver is in libGLX_nvidia.so.0; its ICD file comes with the
# driver's graphics parts, which a container may lack: then write one.
icd=""
for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
    [ -e "$d/nvidia_icd.json" ] && icd=$d/nvidia_icd.json
done
if [ -z "$icd" ] && ldconfig -p 2>/dev/null | grep libGLX_nvidia.so.0 >/dev/null; then
    icd=$out/nvidia_icd.json
    printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "libGLX_nvidia.so.0", "api_version": "1.3.0"}}\n' >"$icd"
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    echo "wrote $icd (the driver's ICD file was missing)"
fi
[ -n "$icd" ] || echo "gpu.sh: warning: no NVIDIA Vulkan ICD found (nvidia_icd.json, libGLX_nvidia.so.0): kc may see no GPU" >&2

say "a slim kc: SPIR-V only, no LLVM, no SPIRV-Tools"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$out/kc" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DKC_WITH_LLVM=OFF -DKC_WITH_SPIRV_TOOLS=OFF \
    -DKC_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="$prefix" >"$out/kc-cmake.log"
cmake --build "$out/kc" -j "$jobs" --target kc >"$out/kc-build.log" || { tail -30 "$out/kc-build.log"; exit 1; }
kc=$out/kc/tools/kc
"$kc" --version

say "devices"
"$kc" devices | tee "$out/devices.txt"
# the NVIDIA device among a backend's devices (its index there, which is what
# --device means with KCRT_BACKEND set), else -1: the backend's best
nvidia_index() {
    "$kc" devices --backend "$1" --json 2>/dev/null | python3 -c '
import json, sys
try:
    ds = json.load(sys.stdin)
except ValueError:
    ds = []
nv = [d for d in ds if d["vendor"] == "nvidia"]
print(nv[0]["index"] if nv else -1)'
}
device=$(nvidia_index vulkan)
[ "$device" = -1 ] && echo "gpu.sh: warning: no NVIDIA device through Vulkan; measuring the best device there is" >&2

if [ -z "$bundle" ]; then
    bundle=$out/bench.kcb
    say "kc build $package"
    "$kc" build "$package" -o "$bundle"
fi
if [ "$tune" != 0 ]; then
    say "kc tune (budget $tune per kernel)"
    KCRT_BACKEND=vulkan "$kc" tune "$bundle" --device "$device" --budget "$tune" --backend vulkan
fi

say "peaks of this device (kc bench --calibrate)"
KCRT_BACKEND=vulkan "$kc" bench --calibrate --device "$device" --peaks "$out/peaks.json"

say "kc bench through Vulkan"
KCRT_BACKEND=vulkan "$kc" bench "$bundle" --device "$device" --repeat "$repeat" --peaks "$out/peaks.json" \
    --json "$out/kc_vulkan.json" --markdown "$out/kc_vulkan.md" | tee "$out/kc_vulkan.txt"
columns=(--kc "vulkan=$out/kc_vulkan.json")

# CUDA: when libkcrt finds the NVIDIA driver (kc devices --backend cuda), the
# bundle has variants for it (sm_NN: built by a kc with LLVM) and so do kc
# bench's calibration kernels (--calibration-bundle, likewise).
if "$kc" devices --backend cuda >/dev/null 2>&1; then
    if ! "$kc" info "$bundle" | grep 'sm_[0-9]' >/dev/null; then
        echo "gpu.sh: no CUDA column: $bundle has no sm_NN variants; build it where kc has LLVM" \
            "(kc build $package -t spirv -t sm_90) and give --bundle" >&2
    elif [ -z "$calib" ]; then
        echo "gpu.sh: no CUDA column: this kc has no LLVM to compile its calibration kernels for CUDA;" \
            "build them where kc has it (kc build bench/calibrate --all-variants -t sm_90 -o calibrate.kcb)" \
            "and give --calibration-bundle" >&2
    else
        say "kc bench through CUDA"
        KCRT_BACKEND=cuda "$kc" bench "$bundle" --device "$(nvidia_index cuda)" --repeat "$repeat" \
            --calibration-bundle "$calib" --json "$out/kc_cuda.json" | tee "$out/kc_cuda.txt"
        columns+=(--kc "cuda=$out/kc_cuda.json")
    fi
else
    echo "gpu.sh: libkcrt finds no CUDA device (no libcuda.so.1, or no GPU): Vulkan only" >&2
fi

say "the same operations through PyTorch; kc / PyTorch"
python3 "$here/torch_compare.py" "${columns[@]}" --repeat $((repeat * 4)) --markdown "$out/compare.md" \
    --json "$out/compare.json" | tee "$out/compare.txt"
echo
echo "gpu.sh: results in $out: compare.md (the table), kc_vulkan.json, peaks.json, devices.txt"
