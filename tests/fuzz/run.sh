#!/usr/bin/env bash
# Runs a fuzz target for a bounded time on a seed corpus. A crash fails
# the run; its input is left in fuzz-artifacts/ to be added to the
# target's regressions folder.
#   run.sh FUZZER [SECONDS] [frontend|kcyaml|bundle] [KC]
# frontend: every kernel the project has; kcyaml: every kc.yaml and the
# kc.yaml regressions; bundle: bundles KC builds from the project's kernels
# (one of them checked).
set -euo pipefail
fuzzer=$1
seconds=${2:-120}
kind=${3:-frontend}
kc=${4:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
mkdir -p "$root/fuzz-artifacts"
max_len=16384
case "$kind" in
frontend)
  # each under a name made from its path so that none overwrites another
  cp "$root"/tests/fuzz/seeds/* "$work"/ 2>/dev/null || true
  (cd "$root" && find kernels bench tests/dsl/corpus tests/runtime/kernels tests/fuzz/regressions \
    -name '*.kc' -size -16k) | while read -r f; do cp "$root/$f" "$work/${f//\//_}"; done
  ;;
kcyaml)
  (cd "$root" && find kernels bench tests/runtime/kernels -name kc.yaml; ls tests/fuzz/regressions_kcyaml/*) |
    while read -r f; do cp "$root/$f" "$work/${f//\//_}"; done
  ;;
bundle)
  [ -n "$kc" ] || { echo "run.sh: bundle seeds need a kc to build them" >&2; exit 2; }
  for k in saxpy softmax gemv layernorm; do
    "$kc" build "$root/kernels/$k.kc" --quiet -o "$work/$k.kcb"
  done
  "$kc" build "$root/tests/runtime/kernels/vectors.kc" --quiet -o "$work/vectors.kcb"
  # a checked build: the loader's reading of its meta and hidden parameters
  "$kc" build "$root/tests/runtime/checked_kernels/checked.kc" --checked --quiet -o "$work/checked.kcb"
  max_len=262144
  ;;
*) echo "run.sh: no fuzz target kind '$kind'" >&2; exit 2 ;;
esac
echo "fuzz $kind: $(ls "$work" | wc -l) seeds, ${seconds}s"
# -rss_limit_mb bounds memory; -timeout flags inputs that take too long (a hang)
ASAN_OPTIONS=detect_leaks=1 "$fuzzer" "$work" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$root/fuzz-artifacts/$kind-" -print_final_stats=1 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
rm -rf "$work"
exit "$status"
