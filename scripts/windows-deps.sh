#!/usr/bin/env bash
# windows-deps.sh — builds, for Windows x86-64 with mingw-w64, the libraries
# kc needs that Debian does not package for mingw: SQLite, jansson, libyaml
# and cmocka (zlib is Debian's libz-mingw-w64-dev). Their sources are Debian's
# own source packages (bookworm), fetched by apt from deb.debian.org — apt
# checks them against the archive's signed index — and unpacked with Debian's
# patches applied (dpkg-source -x). Nothing else is downloaded; once the
# sources are in OUT/src, the build runs offline.
#
#   scripts/windows-deps.sh [OUT]       (default: build-windows-deps)
#
# Writes OUT/src (the source packages), OUT/prefix (static libraries,
# headers, .pc files, and a copy of the Vulkan headers: types only, as on
# Linux). Safe to run again: a library already in OUT/prefix is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-windows-deps}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/src
prefix=$out/prefix
triple=x86_64-w64-mingw32
cc=$triple-gcc-posix
say() { printf '== windows-deps: %s\n' "$*"; }

command -v "$cc" >/dev/null || { echo "windows-deps: $cc not found (scripts/setup.sh installs gcc-mingw-w64-x86-64)" >&2; exit 1; }
mkdir -p "$src" "$prefix/lib/pkgconfig" "$prefix/include"

# Debian's source packages through a private apt state: the machine's own
# sources.list stays as it is (it may have no deb-src line).
fetch_sources() {
    local apt=$out/apt
    [ -f "$src/.fetched" ] && return
    mkdir -p "$apt/lists/partial" "$apt/parts"
    cat >"$apt/parts/debian-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    local opts=(-q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/parts"
        -o "Dir::State::Lists=$apt/lists" -o APT::Sandbox::User=root)
    say "fetching Debian's source packages: sqlite3 jansson libyaml cmocka"
    apt-get "${opts[@]}" update >/dev/null
    (cd "$src" && apt-get "${opts[@]}" source --download-only sqlite3 jansson libyaml cmocka >/dev/null)
    local dsc
    for dsc in "$src"/*.dsc; do
        (cd "$src" && dpkg-source --no-check -x "$(basename "$dsc")" >/dev/null)
    done
    touch "$src/.fetched"
}

# the directory dpkg-source unpacked a package into
unpacked() { find "$src" -maxdepth 1 -type d -name "$1-[0-9]*" | head -1; }

# SQLite: the amalgamation is made from the source tree on this machine
# (configure; make sqlite3.c: tclsh and the host compiler), then compiled for
# Windows with the options Debian's libsqlite3 uses that matter to kc.
build_sqlite() {
    [ -f "$prefix/lib/libsqlite3.a" ] && return
    local dir
    dir=$(unpacked sqlite3)
    say "sqlite3 ($(basename "$dir"))"
    local host=$out/sqlite-host
    mkdir -p "$host"
    (cd "$host" && "$dir/configure" --disable-tcl >/dev/null && make -s sqlite3.c >/dev/null 2>&1)
    "$cc" -O2 -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_FTS5=0 -DSQLITE_DQS=0 -DSQLITE_OMIT_LOAD_EXTENSION \
        -c "$host/sqlite3.c" -o "$host/sqlite3.o"
    $triple-ar rcs "$prefix/lib/libsqlite3.a" "$host/sqlite3.o"
    cp "$host/sqlite3.h" "$host/sqlite3ext.h" "$prefix/include/"
    local version
    version=$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$host/sqlite3.h")
    cat >"$prefix/lib/pkgconfig/sqlite3.pc" <<EOF
prefix=$prefix
Name: SQLite
Description: SQL database engine (amalgamation of Debian's $(basename "$dir"))
Version: $version
Libs: -L\${prefix}/lib -lsqlite3
Cflags: -I\${prefix}/include
EOF
}

# jansson, libyaml and cmocka build with CMake and the project's toolchain file
build_cmake() {
    local name=$1 marker=$2
    shift 2
    [ -f "$prefix/$marker" ] && return
    local dir
    dir=$(unpacked "$name")
    say "$name ($(basename "$dir"))"
    cmake -S "$dir" -B "$out/build-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/mingw-w64.cmake" -DKC_WINDOWS_DEPS="$prefix" \
        -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF "$@" >/dev/null
    ninja -C "$out/build-$name" install >/dev/null
}

fetch_sources
build_sqlite
build_cmake jansson lib/libjansson.a -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON
build_cmake libyaml lib/libyaml.a -DBUILD_TESTING=OFF -DINSTALL_CMAKE_DIR=lib/cmake/yaml
build_cmake cmocka lib/libcmocka-static.a -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF
# the tests link cmocka statically, as every other library: one .exe to run
cp "$prefix/lib/libcmocka-static.a" "$prefix/lib/libcmocka.a"
rm -f "$prefix/lib/libcmocka.dll.a" "$prefix/bin/libcmocka.dll"
# libyaml's CMake installs no yaml-0.1.pc; kc finds it through pkg-config
[ -f "$prefix/lib/pkgconfig/yaml-0.1.pc" ] || cat >"$prefix/lib/pkgconfig/yaml-0.1.pc" <<EOF
prefix=$prefix
Name: LibYAML
Description: Library to parse and emit YAML
Version: 0.2.5
Libs: -L\${prefix}/lib -lyaml
Cflags: -I\${prefix}/include -DYAML_DECLARE_STATIC
EOF
# the Vulkan headers, for their types (libkcrt loads vulkan-1.dll at run
# time), and SPIR-V's (the backend's opcodes): headers only, from Debian's
# libvulkan-dev and spirv-headers
[ -d "$prefix/include/vulkan" ] || cp -r /usr/include/vulkan /usr/include/vk_video "$prefix/include/"
[ -d "$prefix/include/spirv" ] || cp -r /usr/include/spirv "$prefix/include/"
say "done: $prefix"
