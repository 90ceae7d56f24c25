#!/usr/bin/env bash
# kc's main job on the default device, no GPU needed: install what kc needs,
# build kc, compile the shipped RVC/TTS kernels into a bundle, tune them on
# this machine's default device (lavapipe, Mesa's CPU Vulkan driver, when
# there is no GPU) with a small budget, and run the example host program on
# the tuned bundle. This is the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build

kc=build/tools/kc
mkdir -p out
echo
echo "== kc build kernels/ -> out/rvc.kcb"
$kc build kernels/ -t spirv -o out/rvc.kcb
echo
echo "== kc devices"
if $kc help devices >/dev/null 2>&1; then $kc devices || true; fi
if $kc help tune 2>/dev/null | grep -q -- "--budget" && [ -z "${KC_SKIP_TUNE:-}" ]; then
  echo
  echo "== kc tune out/rvc.kcb (small budget)"
  $kc tune out/rvc.kcb --budget "${KC_TUNE_BUDGET:-6}" --kernel saxpy
fi
echo
echo "== kc info out/rvc.kcb"
$kc info out/rvc.kcb
if [ -x build/examples/saxpy_host ]; then
  echo
  echo "== examples/saxpy_host out/rvc.kcb"
  build/examples/saxpy_host out/rvc.kcb
fi
