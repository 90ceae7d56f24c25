#!/usr/bin/env bash
# carry.sh — prepares, on a Debian machine with kc's packages, everything a
# GPU machine without them needs to validate and measure kc: the GPU machine
# lent to a session here has the NVIDIA driver, CMake, CUDA and PyTorch, but
# no network and none of Debian's packages (no SQLite, libyaml, jansson,
# cmocka, Vulkan loader, LLVM). tests/gpu/on_device.sh runs it there.
#
#   tests/gpu/carry.sh [--target sm_90] [--out build-device]
#
# Writes into --out (ignored by git; about 40 MB):
#   slim/        kc without LLVM (SPIR-V only: it compiles what kc tune
#                measures through Vulkan) and libkcrt
#   suite/       the runtime tests and examples, their bundles built here for
#                spirv and the NVIDIA target (kc with LLVM makes the PTX),
#                object files removed; tools/kc replaced by the slim kc
#   lib/         the shared libraries kc and the tests need beyond glibc
#   package.kcb  kernels/ (the shipped package), default variants, spirv + target
#   calibrate.kcb  kc bench's calibration kernels for the target
#   speech.wav   espeak-ng speaking a sentence: the input of the RVC synthesis
# and the Vulkan loader, the validation layer and libglvnd (the NVIDIA Vulkan
# driver, libGLX_nvidia, needs its libGLdispatch) as .debs in .gl/, unpacked
# to / there.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=sm_90
out=build-device
while [ $# -gt 0 ]; do
    case $1 in
    --target) target=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "carry.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
say() { printf '== %s\n' "$*"; }

say "slim kc ($out/slim)"
cmake -S . -B "$out/slim" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKC_WITH_LLVM=OFF -DKC_WITH_SPIRV_TOOLS=OFF \
    -DKC_BUILD_TESTS=OFF >/dev/null
ninja -C "$out/slim" kc kcrt >/dev/null

say "runtime suite for cuda, bundles for spirv;$target ($out/suite)"
cmake -S . -B "$out/suite" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKC_RT_TEST_BACKEND=cuda \
    "-DKC_RT_TEST_TARGETS=spirv;$target" >/dev/null
ninja -C "$out/suite" tests/runtime/all examples/all >/dev/null

say "bundles"
kc=$out/suite/tools/kc
"$kc" build kernels -t spirv -t "$target" --quiet -o "$out/package.kcb"
"$kc" build bench/calibrate --all-variants -t "$target" --quiet -o "$out/calibrate.kcb"
espeak-ng -w "$out/speech.wav" "Hello, this is a test of voice conversion on the graphics card."

# the examples' bundle-building tests need kc with LLVM (sm_NN): run here
(cd "$out/suite" && ctest -R '^example_.*_bundle$' >/dev/null)
# the suite's kc links LLVM, which the GPU machine lacks; its tests only
# read bundles with it
cp "$out/slim/tools/kc" "$kc"
find "$out" \( -name '*.o' -o -name '*.a' -o -name '*.o.d' \) -delete

say "shared libraries ($out/lib)"
mkdir -p "$out/lib"
for l in libyaml-0.so.2 libjansson.so.4 libsqlite3.so.0 libz.so.1 libcmocka.so.0; do
    cp -L "$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')" "$out/lib/"
done

say "Vulkan loader and validation layer (.gl)"
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >>.git/info/exclude
mkdir -p .gl /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
ls .gl/libvulkan1_*.deb .gl/vulkan-validationlayers_*.deb .gl/libglvnd0_*.deb >/dev/null 2>&1 ||
    { apt-get $o update >/dev/null && (cd .gl && apt-get $o download libvulkan1 vulkan-validationlayers libglvnd0 libegl1 libgl1 libglx0 libopengl0 libgles2); }
du -sh "$out" .gl
echo "carry.sh: carry $out and .gl; run tests/gpu/on_device.sh there"
