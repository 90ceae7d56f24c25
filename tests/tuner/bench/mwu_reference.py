#!/usr/bin/env python3
"""mwu_reference.py — the expected values of test_bench_stats, computed
independently of kc with scipy and numpy: Mann-Whitney U (method
"asymptotic", continuity correction, as Google Benchmark's compare.py
calls it) and numpy's default (linear) quantiles.

    python3 tests/tuner/bench/mwu_reference.py > tests/tuner/bench/data/stats_cases.txt

Each line: KIND | x values | y values | expected values. KIND "mwu":
expected u_x p_two_sided p_greater p_less; KIND "quantiles": expected
median q1 q3 (y empty). Deterministic: fixed seeds.
"""
import numpy as np
from scipy.stats import mannwhitneyu


def fmt(v):
    return " ".join(repr(float(a)) for a in v)


def mwu(x, y):
    r = {}
    for alt in ("two-sided", "greater", "less"):
        res = mannwhitneyu(x, y, alternative=alt, method="asymptotic", use_continuity=True)
        r[alt] = res
    u = r["two-sided"].statistic
    print(f"mwu | {fmt(x)} | {fmt(y)} | {u!r} {r['two-sided'].pvalue!r} {r['greater'].pvalue!r} {r['less'].pvalue!r}")


def quantiles(x):
    print(f"quantiles | {fmt(x)} | | {np.median(x)!r} {np.quantile(x, 0.25)!r} {np.quantile(x, 0.75)!r}")


rng = np.random.default_rng(20261121)
# hand-sized cases, ties included
mwu([1, 2, 3], [4, 5, 6])
mwu([4, 5, 6], [1, 2, 3])
mwu([1, 2, 2, 3], [2, 3, 3, 4, 5])
mwu([1.0, 1.0, 1.0], [1.0, 1.0])                    # all tied: p = 1
mwu([5], [1, 2, 3, 4, 6, 7])
mwu([1, 1, 2, 2, 3, 3], [1, 2, 3, 1, 2, 3])
# benchmark-like ratio samples: 15 vs 15, 20 vs 30, a shift, ties by rounding
for n, m, shift in ((15, 15, 0.0), (15, 15, 0.05), (20, 30, 0.10), (20, 20, -0.08), (30, 30, 0.5)):
    x = np.round(rng.normal(1 + shift, 0.05, n), 3)
    y = np.round(rng.normal(1, 0.05, m), 3)
    mwu(list(x), list(y))
# heavy ties: values on a coarse grid
x = list(rng.integers(0, 4, 25).astype(float))
y = list(rng.integers(1, 5, 18).astype(float))
mwu(x, y)

quantiles([3, 1, 2])
quantiles([4, 1, 3, 2])
quantiles([7.5])
quantiles([1, 2, 2, 2, 9, 10, 11])
quantiles(list(np.round(rng.lognormal(0, 0.3, 20), 4)))
