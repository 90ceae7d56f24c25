#!/usr/bin/env bash
# kc's main job on the default device, no GPU needed: install what kc needs,
# build kc, compile the shipped RVC/TTS kernels into a bundle, tune them on
# this machine's default device (lavapipe, Mesa's CPU Vulkan driver, when
# there is no GPU) with a small budget, and run the example host program on
# the tuned bundle. This is the README's first command.
#
# On a CPU device (lavapipe) the tune covers every shipped kernel at its
# cheapest kc.yaml shape (kc tune --smallest: the real shapes of the
# convolutions take seconds per launch on a CPU), 8 evaluations each,
# within 10 minutes in all (KC_TUNE_TIME); other shapes launch the nearest
# tuned variant. Most of the time goes to lavapipe compiling variants on
# their first launch (attention's largest take a minute each on two
# cores); Mesa keeps them in its shader cache, so a second run is quicker.
# On a GPU every kernel and shape gets 12 evaluations. KC_TUNE_BUDGET
# changes the evaluations; the cache is out/tuning.db, so a second run
# measures nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build

kc=build/tools/kc
mkdir -p out
step() { printf '\n== %s\n' "$*"; }

step "kc build kernels/ -o out/rvc.kcb"
$kc build kernels/ -t spirv -o out/rvc.kcb

step "kc devices"
$kc devices

tune=($kc tune out/rvc.kcb --cache out/tuning.db)
# the default device (index 0) is a CPU: its JSON object, on one line, says so
if $kc devices --json | tr -d ' \n' | grep -q '"index":0,[^}]*"type":"cpu"'; then
  step "kc tune out/rvc.kcb --smallest (a CPU device: every kernel at its cheapest shape, ${KC_TUNE_BUDGET:-8} evaluations each, at most ${KC_TUNE_TIME:-10m})"
  "${tune[@]}" --smallest --budget "${KC_TUNE_BUDGET:-8}" --time "${KC_TUNE_TIME:-10m}" --timing-cap 0.2s
else
  step "kc tune out/rvc.kcb (${KC_TUNE_BUDGET:-12} evaluations per kernel and shape)"
  "${tune[@]}" --budget "${KC_TUNE_BUDGET:-12}"
fi

"${tune[@]}" --apply-only --quiet --report out/tuning.html

step "kc info out/rvc.kcb (the tuned table)"
$kc info out/rvc.kcb | grep -E "^kernel|tuned"

step "examples/saxpy_host out/rvc.kcb 48000 (the tuned bundle, from a C program)"
build/examples/saxpy_host out/rvc.kcb 48000
echo
echo "What was measured, drawn: out/tuning.html. The bundle, tuned for this device: out/rvc.kcb."
