#!/usr/bin/env python3
"""slowed_package.py BUILD — shows that bench/ci.sh's second step catches a
slowdown of any one kernel of the shipped package (docs/benchmarks.md).

Copies kernels/ to BUILD/bench/slowed-package/ with every kernel made to do
its work twice: its grid gets twice the workgroups, and the second half
computes what the first does (and writes the same values). A kernel whose
grid's z is 1 gets z = 2 (nothing in it reads the z index); the others get
twice their y and read their y index modulo the original count. Each
benchmark's verdict depends only on its own kernel (its time over a
reference kernel's), so one bundle with every kernel slowed shows each
slowdown caught alone. Builds BUILD/bench/slowed-package.kcb, runs kc
bench on it as bench/ci.sh's second step does, and exits 0 when every
kernel reads as a regression.
"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GRID = re.compile(r"KC_GRID\((.*)\)\s*$")


def split_args(text):
    """KC_GRID's three arguments, split at the top-level commas."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out


def slow(source, name):
    lines = source.split("\n")
    for n, line in enumerate(lines):
        m = GRID.search(line)
        if not m:
            continue
        x, y, z = split_args(m.group(1))
        if z == "1":
            grid = "KC_GRID(%s, %s, 2)" % (x, y)
            body = source
        else:
            grid = "KC_GRID(%s, 2 * (%s), %s)" % (x, y, z)
            body = None
        lines[n] = line[:m.start()] + grid
        out = "\n".join(lines)
        if body is None:
            uses = out.count("kc_group_id(1)")
            if uses != 1 or "kc_global_id(1)" in out or "kc_num_groups(1)" in out:
                sys.exit("slowed_package.py: %s: cannot fold its y index (kc_group_id(1) %d times)" % (name, uses))
            out = out.replace("kc_group_id(1)", "(kc_group_id(1) %% (%s))" % y)
        return out
    sys.exit("slowed_package.py: %s has no KC_GRID on one line" % name)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/slowed_package.py BUILD")
    build = sys.argv[1]
    kc = os.path.join(build, "tools", "kc")
    out = os.path.join(build, "bench", "slowed-package")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "kernels"), out)
    kernels = sorted(f for f in os.listdir(out) if f.endswith(".kc"))
    for f in kernels:
        path = os.path.join(out, f)
        with open(path) as src:
            text = src.read()
        with open(path, "w") as dst:
            dst.write(slow(text, f))
    bundle = os.path.join(build, "bench", "slowed-package.kcb")
    subprocess.run([kc, "build", out, "--quiet", "-o", bundle], check=True)
    bench = subprocess.run([kc, "bench", bundle, "--smallest", "--baseline",
                            os.path.join(HERE, "baseline-package-lavapipe.json"), "--max-regression", "30%",
                            "--repeat", "15", "--skip-other-device", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(bench.stdout)
    names = [f[:-3] for f in kernels]
    caught = [k for k in names if re.search(r"^%s\s.*\sregression\b" % re.escape(k), bench.stdout, re.M)]
    missed = [k for k in names if k not in caught]
    print("slowed_package.py: %d of %d kernels doing twice the work read as regressions%s" %
          (len(caught), len(names), "" if not missed else "; missed: " + ", ".join(missed)))
    return 0 if not missed and bench.returncode == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
