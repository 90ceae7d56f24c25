#!/bin/sh
# replay_table.sh KC [DIR] — the strategy comparison in docs/tuning.md.
#
# For every recorded space in DIR (default: tests/tuner/data/replay), every
# strategy and budget fractions 0.02, 0.05, 0.1 and 0.2, replays 20 runs
# (seeds 1..20) and prints a Markdown table per file: mean fraction of
# optimum / mean evaluations. Deterministic: the same kc gives the same
# table.
set -eu
kc=${1:?usage: replay_table.sh PATH/TO/kc [DIR]}
dir=${2:-$(dirname "$0")/../../tests/tuner/data/replay}
fractions="0.02 0.05 0.1 0.2"
strategies="default ils forest anneal genetic random exhaustive"

for f in "$dir"/*.json.gz; do
    head=$("$kc" tune --replay "$f" --budget 1 | sed -n '1,3p')
    echo "### $(basename "$f" .json.gz)"
    echo
    echo "$head" | sed -n 's/^replay *[^ ]* (\(.*\))$/\1, /p;s/^space *\([0-9]*\) configurations (\([0-9]*\) failed).*/\1 configurations (\2 failed)/p' | tr -d '\n'
    echo "$head" | sed -n 's/^optimum *\([^:]*\):.*/, optimum \1/p'
    echo
    printf '| strategy |'
    for x in $fractions; do printf ' %s |' "$x"; done
    printf '\n|---|'
    for x in $fractions; do printf -- '---|'; done
    echo
    for s in $strategies; do
        printf '| %s |' "$s"
        for x in $fractions; do
            "$kc" tune --replay "$f" --strategy "$s" --budget-fraction "$x" --repeat 20 |
                awk '/^budget/ {b = $2} /^mean fraction/ {m = $5} /^mean evaluations/ {e = $3}
                     END {printf " %s / %.0f |", m, e}'
        done
        echo
    done
    echo
done
