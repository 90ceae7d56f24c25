#!/usr/bin/env bash
# run.sh — builds kc.exe and kcrt.dll for Windows with mingw-w64 and runs
# their tests under Wine, whose vulkan-1.dll forwards to this machine's
# Vulkan (lavapipe); Xvfb gives Wine's graphics driver, which winevulkan
# needs, a display. docs/windows.md says what runs and what does not.
#
#   tests/windows/run.sh HOST_KC [BUILD_DIR]     (default: build-windows)
#
# HOST_KC is a kc for this machine: it builds the bundles the tests load
# (a bundle is the same wherever it is built) and is crossing.sh's Linux side.
set -euo pipefail
cd "$(dirname "$0")/../.."
host_kc=$(realpath "$1")
out=${2:-build-windows}
jobs=$(nproc)

scripts/windows-deps.sh "$out-deps"
cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake \
    -DKC_WINDOWS_DEPS="$out-deps/prefix" -DKC_WITH_LLVM=OFF -DKC_WITH_SPIRV_TOOLS=OFF \
    -DKC_BUNDLE_KC="$host_kc" -DKC_WERROR=ON >/dev/null
ninja -C "$out" -j "$jobs"
objdump=x86_64-w64-mingw32-objdump
for f in "$out/runtime/kcrt.dll" "$out/tools/kc.exe"; do
    deps=$($objdump -p "$f" | sed -n 's/.*DLL Name: //p' | grep -viE '^(kernel32|msvcrt|user32|advapi32|shell32|ole32|ws2_32|bcrypt)\.dll$' || true)
    [ -z "$deps" ] || { echo "run.sh: $f needs DLLs Windows lacks: $deps" >&2; exit 1; }
done
echo "kcrt.dll exports $($objdump -p "$out/runtime/kcrt.dll" | grep -cE '\] kcrt_') kcrt_ functions and nothing else"

export WINEPREFIX="$(realpath "$out")/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
[ -d "$WINEPREFIX" ] || xvfb-run -a wineboot --init >"$out/wineboot.log" 2>&1 ||
    { cat "$out/wineboot.log" >&2; echo "run.sh: wineboot failed" >&2; exit 1; }
xvfb-run -a ctest --test-dir "$out" --output-on-failure -j "$jobs"
wineserver -k 2>/dev/null || true
