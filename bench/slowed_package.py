#!/usr/bin/env python3
"""slowed_package.py BUILD — shows that bench/ci.sh's second step catches a
slowdown of any one kernel of the shipped package (docs/benchmarks.md).

Copies kernels/ to BUILD/bench/slowed-package/ with every kernel made to do
its work COPIES (4) times: its grid gets that many times the workgroups,
and the others compute what the first do (and write the same values). A
kernel whose grid's z is 1 gets z = COPIES (nothing in it reads the z
index); the others get COPIES times their y and read their y index modulo
the original count, or, where the kernel's file does not read its y index
(bmm's is in gemm.kch), COPIES times their z, read modulo the original
count (and a grid-stride loop's kc_num_groups(2) read as that count). Each
benchmark's verdict depends only on its own kernel (its time against the
same kernel of bench/accepted-package.kcb, interleaved), so one bundle
with every kernel slowed shows each slowdown caught alone. Builds
BUILD/bench/slowed-package.kcb, runs kc bench on it as bench/ci.sh's
second step does, and exits 0 when every kernel reads as a regression.
"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Copies of every workgroup. Two made some kernels only 1.0-1.45x slower on
# lavapipe (the copies re-read what the first ones left in the CPU's
# caches; a one-row kernel's time is its dispatch): four make every
# kernel's copy cost well over the 30% the check must catch.
COPIES = 4
ROOT = os.path.dirname(HERE)


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


def grid_of(source, name):
    """The span of KC_GRID's argument text (it may run over several lines)."""
    start = source.find("KC_GRID(")
    if start < 0:
        sys.exit("slowed_package.py: %s has no KC_GRID" % name)
    depth, i = 0, start + len("KC_GRID")
    for j in range(i, len(source)):
        depth += source[j] == "("
        depth -= source[j] == ")"
        if depth == 0:
            return i + 1, j
    sys.exit("slowed_package.py: %s: KC_GRID( is never closed" % name)


def fold(text, axis, count):
    """Groups count and up of an axis redo what groups 0 .. count - 1 do:
    the group index taken modulo count, and the group count read as count
    (a grid-stride loop then walks the same items again in each copy)."""
    return (text.replace("kc_group_id(%d)" % axis, "(kc_group_id(%d) %% (%s))" % (axis, count))
            .replace("kc_num_groups(%d)" % axis, "(%s)" % count))


def foldable(text, axis):
    """The kernel's file reads the axis's group index once and nothing else
    of it (an index read in an include cannot be folded here)."""
    return text.count("kc_group_id(%d)" % axis) == 1 and "kc_global_id(%d)" % axis not in text


def slow(source, name):
    lo, hi = grid_of(source, name)
    x, y, z = (" ".join(a.split()) for a in split_args(source[lo:hi]))
    if z == "1":
        return source[:lo] + "%s, %s, %d" % (x, y, COPIES) + source[hi:]
    if foldable(source, 1) and "kc_num_groups(1)" not in source:
        return fold(source[:lo] + "%s, %d * (%s), %s" % (x, COPIES, y, z) + source[hi:], 1, y)
    if foldable(source, 2):
        return fold(source[:lo] + "%s, %s, %d * (%s)" % (x, y, COPIES, z) + source[hi:], 2, z)
    sys.exit("slowed_package.py: %s: cannot fold its y or z index (read %d and %d times in the file)" %
             (name, source.count("kc_group_id(1)"), source.count("kc_group_id(2)")))


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
    bench = subprocess.run([kc, "bench", bundle, "--smallest", "--against",
                            os.path.join(HERE, "accepted-package.kcb"), "--max-regression", "30%",
                            "--repeat", "15", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(bench.stdout)
    names = [f[:-3] for f in kernels]
    caught = [k for k in names if re.search(r"^%s\s.*\sregression\b" % re.escape(k), bench.stdout, re.M)]
    missed = [k for k in names if k not in caught]
    print("slowed_package.py: %d of %d kernels doing their work %d times read as regressions%s" %
          (len(caught), len(names), COPIES, "" if not missed else "; missed: " + ", ".join(missed)))
    return 0 if not missed and bench.returncode == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
