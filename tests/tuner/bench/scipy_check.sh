#!/bin/sh
# scipy_check.sh — runs mwu_reference.py with a python3 that has scipy
# (Debian's /usr/bin/python3 with python3-scipy, or the first python3 on
# PATH) and compares its output with the committed data/stats_cases.txt.
# Exit 77 (skipped) when no python3 has scipy.
here=$(cd "$(dirname "$0")" && pwd)
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import scipy, numpy' 2>/dev/null; then
        "$p" "$here/mwu_reference.py" | diff -u "$here/data/stats_cases.txt" -
        exit $?
    fi
done
echo "skipped: no python3 with scipy and numpy (Debian: python3-scipy)"
exit 77
