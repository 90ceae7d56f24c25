#!/usr/bin/env bash
# consumers.sh BUILD_DIR BUNDLE [PREFIX] — installs a built kc tree under a
# fresh prefix (or, given PREFIX, takes the tree `cmake --install BUILD_DIR`
# already put there, at the prefix it was configured with), then builds
# examples/saxpy_host.c as an application outside the tree would, three
# ways, and runs each on the bundle:
#   1. cc with `pkg-config --cflags --libs kcrt`      (libkcrt.so)
#   2. a CMake project with find_package(kcrt)        (kcrt::kcrt)
#   3. the same with -DKCRT_STATIC=ON                 (kcrt::kcrt_static, libkcrt.a)
# and checks what the prefix holds. Exit 0 when all of it works, 77 when
# the machine has no device for the kernels to run on.
set -euo pipefail
build=$1 bundle=$2 installed=${3:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/kc-consumers.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=${installed:-$work/prefix}

say() { printf 'consumers: %s\n' "$*"; }
run() { # run NAME PROGRAM: the program on the bundle, "correct" expected
  local out rc=0
  out=$("$2" "$bundle" 100000 2>&1) || rc=$?
  if [ "$rc" = 77 ]; then say "$1: no device here"; exit 77; fi
  if [ "$rc" != 0 ] || ! grep -q correct <<<"$out"; then say "$1 FAILED (exit $rc): $out"; exit 1; fi
  say "$1: ${out##*$'\n'}"
}

[ -n "$installed" ] || cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/kc/kcrt.h lib/libkcrt.a lib/pkgconfig/kcrt.pc lib/cmake/kcrt/kcrtConfig.cmake \
         lib/cmake/kcrt/kcrtConfigVersion.cmake; do
  [ -f "$prefix/$f" ] || { say "the prefix has no $f"; exit 1; }
done
soname=$(readelf -d "$prefix"/lib/libkcrt.so | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libkcrt.so.0 ] || { say "libkcrt.so's SONAME is '$soname', not libkcrt.so.0"; exit 1; }
[ -L "$prefix/lib/libkcrt.so" ] && [ -f "$prefix/lib/libkcrt.so.0" ] || { say "no libkcrt.so links"; exit 1; }
# only the kcrt_ API leaves the shared library
leaked=$(nm -D --defined-only "$prefix/lib/libkcrt.so" | awk '$2 ~ /[TDB]/ {print $3}' | grep -v '^kcrt_' || true)
[ -z "$leaked" ] || { say "libkcrt.so exports more than kcrt_*: $leaked"; exit 1; }

# with kc: the shipped kernels' bundle, which the Python package finds beside
# the installed libkcrt
if [ -x "$prefix/bin/kc" ]; then
  [ -f "$prefix/share/kc/rvc.kcb" ] || { say "the prefix has kc but no share/kc/rvc.kcb"; exit 1; }
  found=$(LD_LIBRARY_PATH=$prefix/lib PYTHONPATH=$src/python KCRT_LIBRARY= /usr/bin/python3 -c \
    'import kcrt, kcrt.nn; print(kcrt.library_path); print(kcrt.nn._bundle_candidates()[0])' 2>&1) ||
    { say "the kcrt package does not load the installed libkcrt: $found"; exit 1; }
  [ "$(sed -n 1p <<<"$found")" = "$prefix/lib/libkcrt.so.0.1.0" ] && [ -f "$(sed -n 2p <<<"$found")" ] ||
    { say "the kcrt package found '$found', not the prefix's libkcrt and rvc.kcb"; exit 1; }
  say "python: kcrt loads $prefix/lib/libkcrt.so.0.1.0 and finds share/kc/rvc.kcb"
fi

# 1. pkg-config, with the prefix found from the .pc file's own place
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion kcrt)" = "$(sed -n 's/^project(kc VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ]
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$src/examples/saxpy_host.c" $(pkg-config --cflags --libs kcrt) -lm -o "$work/pc_app"
LD_LIBRARY_PATH=$prefix/lib run "pkg-config build" "$work/pc_app"

# 2 and 3. find_package(kcrt)
for static in OFF ON; do
  cmake -S "$src/examples/consumer" -B "$work/cm_$static" -DCMAKE_PREFIX_PATH="$prefix" -DKCRT_STATIC=$static \
        >/dev/null
  cmake --build "$work/cm_$static" >/dev/null
  LD_LIBRARY_PATH=$prefix/lib run "find_package build (static $static)" "$work/cm_$static/saxpy_host"
done
# the static one needs no libkcrt.so at run time
! ldd "$work/cm_ON/saxpy_host" | grep -q libkcrt || { say "the static build still needs libkcrt.so"; exit 1; }
say "ok"
