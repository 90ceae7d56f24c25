#!/bin/sh
# noise.sh BUILD [RUNS [kc bench options...]] — the figures of
# docs/benchmarks.md (options go to bench/ci.sh, after its own, so
# `--max-regression 25%` makes the check stricter): how often the
# CI check (bench/ci.sh, unchanged tree) cries wolf, idle and while other
# processes load the machine, and whether it catches a deliberately slowed
# kernel (bench/slowed: conv1d doing its arithmetic twice).
#
#   idle       RUNS checks, nothing else running
#   one core   RUNS checks beside one CPU hog pinned to core 0
#   all cores  RUNS checks beside one CPU hog per core
#   slowed     RUNS checks of BUILD/bench/slowed.kcb against the same baseline
#
# The hogs are `stress-ng --cpu N` (Debian's stress-ng), or busy shell
# loops when it is missing. Prints one line per check and a summary;
# BUILD/bench/noise/ keeps every check's JSON. Exit status 0 when the
# unchanged tree never failed and the slowed kernel was always caught.
set -eu
build=${1:?usage: bench/noise.sh BUILD_DIR [RUNS [kc bench options...]]}
runs=${2:-10}
shift $(($# < 2 ? $# : 2))
extra=$* # options for ci.sh (no spaces inside one)
here=$(cd "$(dirname "$0")" && pwd)
out=$build/bench/noise
mkdir -p "$out"
cores=$(nproc)
hog=""

start_hog() { # $1: cores to load
    if command -v stress-ng >/dev/null; then
        if [ "$1" = 1 ]; then stress-ng --cpu 1 --taskset 0 --timeout 3600s >/dev/null 2>&1 &
        else stress-ng --cpu "$1" --timeout 3600s >/dev/null 2>&1 & fi
        hog=$!
    else
        hog=""
        i=0
        while [ "$i" -lt "$1" ]; do
            sh -c 'while :; do :; done' & hog="$hog $!"
            [ "$1" = 1 ] && command -v taskset >/dev/null && taskset -pc 0 "$!" >/dev/null
            i=$((i + 1))
        done
    fi
    sleep 1
}

stop_hog() {
    for p in $hog; do kill "$p" 2>/dev/null || true; done
    for p in $hog; do wait "$p" 2>/dev/null || true; done
    hog=""
}
trap stop_hog EXIT INT TERM

# one check: prints "condition i: rc R, S s, worst change C%, verdicts"
check() { # $1: condition, $2: run, $3: bundle
    json=$out/$1-$2.json
    t0=$(date +%s.%N)
    set +e
    KC_BENCH_PACKAGE= KC_BENCH_BUNDLE=$3 "$here/ci.sh" "$build" --quiet --json "$json" $extra >"$out/$1-$2.txt" 2>&1
    rc=$?
    set -e
    t1=$(date +%s.%N)
    python3 - "$json" "$1" "$2" "$rc" "$t0" "$t1" <<'PY'
import json, sys
path, cond, run, rc, t0, t1 = sys.argv[1:]
try:
    r = json.load(open(path))
    b = [x for x in r["benchmarks"] if "comparison" in x]
    worst = max(b, key=lambda x: x["comparison"]["change"])
    ch = " ".join(f'{x["kernel"]} {100 * x["comparison"]["change"]:+.1f}%{"*" if x["comparison"]["remeasured"] else ""}' for x in b)
    v = ",".join(sorted(set(x["verdict"] for x in r["benchmarks"])))
except Exception as e:
    ch, v = f"(no results: {e})", "-"
print(f"{cond:9s} {run:>2s}: rc {rc}, {float(t1) - float(t0):5.1f} s, {v:10s}  {ch}")
PY
    echo "$1 $rc" >>"$out/rcs"
}

rm -f "$out/rcs"
echo "bench/noise.sh: $runs checks per condition on $cores cores; '*' marks a benchmark measured twice"
for i in $(seq 1 "$runs"); do check idle "$i" "$build/bench/bench.kcb"; done
start_hog 1
for i in $(seq 1 "$runs"); do check one-core "$i" "$build/bench/bench.kcb"; done
stop_hog
start_hog "$cores"
for i in $(seq 1 "$runs"); do check all-cores "$i" "$build/bench/bench.kcb"; done
stop_hog
for i in $(seq 1 "$runs"); do check slowed "$i" "$build/bench/slowed.kcb"; done

echo
awk '$1 != "slowed" { n[$1]++; if ($2 != 0) fa[$1]++ }
     $1 == "slowed" { s++; if ($2 == 1) caught++ }
     END {
       ok = 1
       for (c in n) { printf "%-9s false alarms: %d of %d\n", c, fa[c] + 0, n[c]; if (fa[c]) ok = 0 }
       printf "slowed    caught: %d of %d\n", caught + 0, s; if (caught != s) ok = 0
       exit ok ? 0 : 1
     }' "$out/rcs"
