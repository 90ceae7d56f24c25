#!/usr/bin/env python3
"""Regenerates the replay fixtures beside this script from small.json.

  small.json.gz         small.json, gzipped
  truncated.json        small.json cut inside a string of its 8th record,
                        as an interrupted tuner leaves it (no closing braces)
  truncated_comma.json  small.json cut after the 7th record's comma
  cut_stream.json.gz    a 171-configuration space whose gzip stream itself
                        is cut at two thirds

Run it from anywhere; the output is byte-for-byte reproducible.
"""
import gzip, io, json, os

here = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(here, name)


def gz(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as g:
        g.write(data)
    return buf.getvalue()


small = open(path("small.json")).read()
open(path("small.json.gz"), "wb").write(gz(small.encode()))

cut = '"64,1.0,shared": {"block": 64, "tile": 1.0, "mode": "sha'
open(path("truncated.json"), "w").write(small[: small.index(cut) + len(cut)])
open(path("truncated_comma.json"), "w").write(small[: small.index('"64,1.0,shared"')])

cache = {}
for a in range(8):
    for b in range(8):
        for c in range(4):
            if (a + b + c) % 3 == 0:
                continue  # broke a restriction: absent
            t = 1.0 + ((a - 5) ** 2 + (b - 2) ** 2 + (c - 1) ** 2) / 10.0
            cache["%d,%d,%d" % (2**a, b, c)] = {
                "a": 2**a, "b": b, "c": c,
                "time": t if (a * b) % 7 != 6 else "RuntimeFailedConfig"}
space = {"tune_params_keys": ["a", "b", "c"],
         "tune_params": {"a": [2**a for a in range(8)], "b": list(range(8)), "c": list(range(4))},
         "cache": cache}
data = gz(json.dumps(space, indent=1).encode())
open(path("cut_stream.json.gz"), "wb").write(data[: len(data) * 2 // 3])
