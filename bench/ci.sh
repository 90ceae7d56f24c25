#!/bin/sh
# ci.sh BUILD [kc bench options...] — the benchmark step of scripts/test.sh,
# on this machine's default device (lavapipe without a GPU):
#   1. kc's benchmark package (bench/kernels, BUILD/bench/bench.kcb) against
#      bench/accepted.kcb, the same package as the last accepted kc built
#      it, both measured in this run, interleaved (kc bench --against);
#      writes BUILD/bench/results.json, junit.xml and summary.md;
#   2. the shipped package (kernels/, BUILD/share/kc/rvc.kcb), every kernel
#      at its cheapest kc.yaml shape (kc bench --smallest), against
#      bench/baseline-package-lavapipe.json, a recorded baseline of ratios
#      to kc's reference kernel; writes BUILD/bench/package.json,
#      package.xml and package.md. A recorded baseline drifts when the
#      virtual machine moves to another host (docs/benchmarks.md), so
#      scripts/test.sh reports this step without failing on it.
#
# Step 1 needs nothing recorded on another day: whatever host, driver or
# load, both bundles' kernels run under it alike. It answers "did this
# tree's kc make the benchmark kernels slower than the accepted one did?".
# When a change makes them faster on purpose, accept it:
#   build/tools/kc build bench/kernels --quiet -o bench/accepted.kcb
# Step 1's threshold (20%) is about twice the largest change an unchanged
# tree showed on lavapipe with both CPUs loaded; step 2's (30%) is wider,
# for ratios recorded on another day. docs/benchmarks.md shows how often
# each cries wolf and that a kernel doing twice the work is caught. Step 2
# is skipped on a device other than its baseline's (--skip-other-device).
#
# KC_BENCH_BUNDLE and KC_BENCH_PACKAGE override the bundles (bench/noise.sh
# gives the first the slowed one), KC_BENCH_ACCEPTED step 1's baseline
# bundle; an empty bundle skips its step.
# Exit status: 0 no regression in either, 1 a regression or an error.
set -eu
build=${1:?usage: bench/ci.sh BUILD_DIR [kc bench options...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
bundle=${KC_BENCH_BUNDLE-$build/bench/bench.kcb}
package=${KC_BENCH_PACKAGE-$build/share/kc/rvc.kcb}
accepted=${KC_BENCH_ACCEPTED-$here/accepted.kcb}
status=0
if [ -n "$bundle" ]; then
    "$build/tools/kc" bench "$bundle" --against "$accepted" --max-regression 20% --repeat 15 \
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
