#!/usr/bin/env bash
# Runs the front-end fuzzer for a bounded time on a seed corpus of every
# kernel the project has. A crash fails the run; its input
# is left in fuzz-artifacts/ to be added to tests/fuzz/regressions/.
set -euo pipefail
fuzzer=$1
seconds=${2:-120}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
mkdir -p "$root/fuzz-artifacts"
# Seeds: every kernel the project has (shipped, benchmark, runtime tests, and
# the front end's corpus of accepted and refused programs), each under a
# name made from its path so that none overwrites another.
cp "$root"/tests/fuzz/seeds/* "$work"/ 2>/dev/null || true
(cd "$root" && find kernels bench tests/dsl/corpus tests/runtime/kernels tests/fuzz/regressions \
  -name '*.kc' -size -16k) | while read -r f; do cp "$root/$f" "$work/${f//\//_}"; done
echo "fuzz: $(ls "$work" | wc -l) seeds, ${seconds}s"
# -rss_limit_mb bounds memory; -timeout flags inputs that take too long (a hang)
ASAN_OPTIONS=detect_leaks=1 "$fuzzer" "$work" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$root/fuzz-artifacts/" -print_final_stats=1 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
rm -rf "$work"
exit "$status"
