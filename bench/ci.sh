#!/bin/sh
# ci.sh BUILD [kc bench options...] — the benchmark step of scripts/test.sh,
# on this machine's default device (lavapipe without a GPU), against the
# committed lavapipe baselines:
#   1. kc's benchmark package (bench/kernels, BUILD/bench/bench.kcb) against
#      bench/baseline-lavapipe.json; writes BUILD/bench/results.json,
#      junit.xml and summary.md;
#   2. the shipped package (kernels/, BUILD/share/kc/rvc.kcb), every kernel
#      at its cheapest kc.yaml shape (kc bench --smallest), against
#      bench/baseline-package-lavapipe.json; writes BUILD/bench/package.json,
#      package.xml and package.md.
#
# The threshold is wide (30%) because lavapipe runs on the CPU that CI
# shares with everything else; docs/benchmarks.md shows how often it
# cries wolf and that a kernel doing twice the work is caught. On a machine
# whose device is not the one of the baseline the check is skipped
# (--skip-other-device), saying so.
#
# KC_BENCH_BUNDLE and KC_BENCH_PACKAGE override the bundles (bench/noise.sh
# gives the first the slowed one); an empty one skips its step.
# Exit status: 0 no regression in either, 1 a regression or an error.
set -eu
build=${1:?usage: bench/ci.sh BUILD_DIR [kc bench options...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
bundle=${KC_BENCH_BUNDLE-$build/bench/bench.kcb}
package=${KC_BENCH_PACKAGE-$build/share/kc/rvc.kcb}
status=0
if [ -n "$bundle" ]; then
    "$build/tools/kc" bench "$bundle" --baseline "$here/baseline-lavapipe.json" \
        --max-regression 30% --repeat 15 --skip-other-device \
        --json "$build/bench/results.json" --junit "$build/bench/junit.xml" \
        --markdown "$build/bench/summary.md" "$@" || status=1
fi
if [ -n "$package" ]; then
    "$build/tools/kc" bench "$package" --smallest --baseline "$here/baseline-package-lavapipe.json" \
        --max-regression 30% --repeat 15 --skip-other-device \
        --json "$build/bench/package.json" --junit "$build/bench/package.xml" \
        --markdown "$build/bench/package.md" "$@" || status=1
fi
exit $status
