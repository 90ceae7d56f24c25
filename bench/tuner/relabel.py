#!/usr/bin/env python3
"""relabel.py IN.json.gz SEED OUT.json.gz — a recorded space whose round
values mean nothing: in every integer tunable of more than two values
that mixes round values (0 and powers of two) with others, the values'
labels are permuted at random (seeded), and the cache keys rewritten to
match. The times stay; which value carries them changes.

ils searches round values first (tuner/ils.c); replaying these files
shows what that prior costs on a space where it is wrong (docs/tuning.md,
"Round values first"):

    for s in 1 2 3; do python3 bench/tuner/relabel.py \\
        tests/tuner/data/replay/convolution_A4000.json.gz $s /tmp/a$s.json.gz; done
    kc tune --replay /tmp/a1.json.gz --strategy ils --budget-fraction 0.02 --repeat 200
"""
import gzip
import json
import random
import sys


def is_round(v):
    return isinstance(v, int) and (v == 0 or (v > 0 and v & (v - 1) == 0))


def mixed(values):
    rounds = sum(map(is_round, values))
    return all(isinstance(v, int) for v in values) and len(values) > 2 and 2 <= rounds < len(values)


def main():
    src, seed, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with gzip.open(src, "rt") as f:
        space = json.load(f)
    rng = random.Random(seed)
    keys = space["tune_params_keys"]
    maps = {}
    for k in keys:
        values = space["tune_params"][k]
        if mixed(values):
            shuffled = values[:]
            rng.shuffle(shuffled)
            maps[k] = dict(zip(values, shuffled))
    cache = {}
    for entry in space["cache"].values():
        entry = dict(entry)
        for k, m in maps.items():
            entry[k] = m[entry[k]]
        cache[",".join(str(entry[k]) for k in keys)] = entry
    space["cache"] = cache
    with gzip.open(out, "wt") as f:
        json.dump(space, f)
    for k, m in maps.items():
        print(f"{k}: " + ", ".join(f"{v}->{m[v]}" for v in space["tune_params"][k]))


if __name__ == "__main__":
    main()
