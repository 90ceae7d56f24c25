#!/bin/sh
# ci.sh BUILD [kc bench options...] — the benchmark step of scripts/test.sh,
# on this machine's default device (lavapipe without a GPU):
#   1. kc's benchmark package (bench/kernels, BUILD/bench/bench.kcb) against
#      bench/accepted.kcb, the same package as the last accepted kc built
#      it, both measured in this run, interleaved (kc bench --against);
#      writes BUILD/bench/results.json, junit.xml and summary.md;
#   2. the shipped package (kernels/, BUILD/share/kc/rvc.kcb), every kernel
#      at its cheapest kc.yaml shape of at least 1 Mi bytes + flops (kc
#      bench --smallest), against bench/accepted-package.kcb, the package
#      as the last accepted kc built it, the same way; writes
#      BUILD/bench/package.json, package.xml and package.md.
#
# Neither needs anything recorded on another day: whatever host, driver or
# load, both bundles' kernels run under it alike. They answer "did this
# tree make a kernel slower than the accepted build did?". When a change
# makes kernels faster on purpose, accept it:
#   build/tools/kc build bench/kernels --quiet -o bench/accepted.kcb
#   build/tools/kc build kernels --quiet -o bench/accepted-package.kcb
# The threshold (20%) is about twice the largest change an unchanged tree
# showed on lavapipe with both CPUs loaded; docs/benchmarks.md shows how
# often it cries wolf and that a kernel doing more work is caught.
#
# KC_BENCH_BUNDLE and KC_BENCH_PACKAGE override the bundles (bench/noise.sh
# gives the first the slowed one), KC_BENCH_ACCEPTED and
# KC_BENCH_ACCEPTED_PACKAGE their baseline bundles; an empty bundle skips its step.
# Exit status: 0 no regression in either, 1 a regression or an error.
set -eu
build=${1:?usage: bench/ci.sh BUILD_DIR [kc bench options...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
bundle=${KC_BENCH_BUNDLE-$build/bench/bench.kcb}
package=${KC_BENCH_PACKAGE-$build/share/kc/rvc.kcb}
accepted=${KC_BENCH_ACCEPTED-$here/accepted.kcb}
accepted_package=${KC_BENCH_ACCEPTED_PACKAGE-$here/accepted-package.kcb}
status=0
if [ -n "$bundle" ]; then
    "$build/tools/kc" bench "$bundle" --against "$accepted" --max-regression 20% --repeat 15 \
        --json "$build/bench/results.json" --junit "$build/bench/junit.xml" \
        --markdown "$build/bench/summary.md" "$@" || status=1
fi
if [ -n "$package" ]; then
    "$build/tools/kc" bench "$package" --smallest --against "$accepted_package" --max-regression 20% --repeat 15 \
        --json "$build/bench/package.json" --junit "$build/bench/package.xml" \
        --markdown "$build/bench/package.md" "$@" || status=1
fi
exit $status
