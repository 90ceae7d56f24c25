#!/usr/bin/env bash
# Runs the front-end fuzzer for a bounded time on the seed corpus (the
# shipped kernels and tests/fuzz/seeds). A crash fails the run; its input
# is left in fuzz-artifacts/ to be added to tests/fuzz/regressions/.
set -euo pipefail
fuzzer=$1
seconds=${2:-120}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
mkdir -p "$root/fuzz-artifacts"
cp "$root"/tests/fuzz/seeds/* "$work"/ 2>/dev/null || true
find "$root/kernels" -name '*.kc' -exec cp {} "$work"/ \; 2>/dev/null || true
echo "fuzz: $(ls "$work" | wc -l) seeds, ${seconds}s"
# -rss_limit_mb bounds memory; -timeout flags inputs that take too long (a hang)
ASAN_OPTIONS=detect_leaks=1 "$fuzzer" "$work" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$root/fuzz-artifacts/" -print_final_stats=1 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
rm -rf "$work"
exit "$status"
