#!/bin/sh
# ci.sh BUILD [kc bench options...] — the benchmark step of scripts/test.sh:
# kc's benchmark package (bench/kernels, built as BUILD/bench/bench.kcb) on
# this machine's default device (lavapipe without a GPU) against the
# committed lavapipe baseline, bench/baseline-lavapipe.json. Writes
# BUILD/bench/results.json, junit.xml and summary.md.
#
# The threshold is wide (30%) because lavapipe runs on the CPU that CI
# shares with everything else; docs/benchmarks.md shows how often it
# cries wolf (never, in 30 runs idle and loaded) and that a kernel doing
# twice the work is caught. On a machine whose device is not the one of
# the baseline the check is skipped (--skip-other-device), saying so.
#
# KC_BENCH_BUNDLE overrides the bundle (bench/noise.sh gives it the slowed
# one). Exit status: kc bench's: 0 no regression, 1 a regression or an error.
set -eu
build=${1:?usage: bench/ci.sh BUILD_DIR [kc bench options...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
bundle=${KC_BENCH_BUNDLE:-$build/bench/bench.kcb}
exec "$build/tools/kc" bench "$bundle" --baseline "$here/baseline-lavapipe.json" \
    --max-regression 30% --repeat 15 --skip-other-device \
    --json "$build/bench/results.json" --junit "$build/bench/junit.xml" \
    --markdown "$build/bench/summary.md" "$@"
