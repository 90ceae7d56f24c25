#!/usr/bin/env bash
# run.sh [BUILD_DIR] — what a launch from Python costs over one from C:
# launch_c and launch_py.py (the same loop: saxpy on 256 elements, a
# finish every 100 launches) alternate five times on this machine's
# device; it prints each pair and the medians' difference in µs per launch.
set -euo pipefail
build=$(realpath "${1:-build}")
src=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$build/examples/saxpy.kcb
[ -f "$bundle" ] || "$build/tools/kc" build "$src/examples/saxpy" -o "$bundle" --quiet
export KCRT_LIBRARY=$build/runtime/libkcrt.so.0 PYTHONPATH=$src/python
cs=() ps=()
for i in 1 2 3 4 5; do
  c=$("$build/bench/launch/launch_c" "$bundle" saxpy)
  p=$(/usr/bin/python3 "$src/bench/launch/launch_py.py" "$bundle" saxpy)
  printf 'run %d: C %s µs, Python %s µs per launch\n' "$i" "$c" "$p"
  cs+=("$c") ps+=("$p")
done
median() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
c=$(median "${cs[@]}") p=$(median "${ps[@]}")
awk -v c="$c" -v p="$p" 'BEGIN { printf "median: C %.2f µs, Python %.2f µs: Python adds %.2f µs per launch\n", c, p, p - c }'
