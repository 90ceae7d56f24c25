#!/usr/bin/env bash
# runtime_only.sh KC [BUILD_DIR] — configures, builds and tests libkcrt with
# -DKC_RUNTIME_ONLY=ON where kc's other dependencies cannot be found: LLVM
# and SPIRV-Tools are disabled for find_package, and pkg-config sees only
# SQLite, so libyaml and jansson are out of reach. KC (a full build's kc)
# builds the runtime tests' bundles. Then, as DESIGN.md §10 and a host app
# do it: configured with -DCMAKE_INSTALL_PREFIX=P, `cmake --install`, and
# consumers built against P with pkg-config and find_package(kcrt) run a
# bundle (consumers.sh). Exit 0 when all of it works.
set -euo pipefail
kc=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$src/build-runtime-only}
pcdir=$(mktemp -d /tmp/kc-pc.XXXXXX)
prefix=$(mktemp -d /tmp/kc-prefix.XXXXXX)
trap 'rm -rf "$pcdir" "$prefix"' EXIT
sqlite_pc=$(pkg-config --variable=pcfiledir sqlite3)/sqlite3.pc
cp "$sqlite_pc" "$pcdir/"

rm -rf "$build"
PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_PATH= cmake -S "$src" -B "$build" -G Ninja -DKC_RUNTIME_ONLY=ON \
  -DKC_WERROR=ON -DKC_BUNDLE_KC="$kc" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_SPIRV-Tools=ON >/dev/null
# nothing of the compiler's dependencies was looked for, let alone found
if grep -Eiq '^(LLVM_DIR|YAML_|JANSSON_|SPIRV)' "$build/CMakeCache.txt"; then
  echo "runtime_only: the configure looked for a compiler dependency:" >&2
  grep -Ei '^(LLVM_DIR|YAML_|JANSSON_|SPIRV)' "$build/CMakeCache.txt" >&2
  exit 1
fi
if grep -q 'CMAKE_CXX_COMPILER:' "$build/CMakeCache.txt"; then
  echo "runtime_only: the configure enabled C++" >&2
  exit 1
fi
PKG_CONFIG_LIBDIR=$pcdir ninja -C "$build"
[ ! -e "$build/tools/kc" ] || { echo "runtime_only: it built kc" >&2; exit 1; }
# The default suite: the exhaustive tier's python_mutation (each mutant a
# package rebuild, 170 s in CI) checks the Python tests, not the library
# they run on, and runs in the full build's exhaustive tier already.
(cd "$build" && ctest --output-on-failure -j "$(nproc)" -LE exhaustive)
cmake --install "$build" >/dev/null
bash "$src/tests/install/consumers.sh" "$build" "$build/examples/saxpy.kcb" "$prefix"
