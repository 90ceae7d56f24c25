#!/usr/bin/python3
"""op_count.py — what each function of kc_math.kc costs, counted.

Compiles kc_math.kc as C (through tests/libm/kc_shim.h) with clang -O2 to
LLVM IR, where every helper is inlined, constants folded and the short
loops unrolled, much as a GPU compiler will do, and counts the
instructions of each entry point by kind. The counts are static: every
path of the function, special cases included, not the path one input
takes. kc_mul_hi (a 64-bit multiply and shift in C) counts as one integer
multiply, as it is one instruction on a GPU (or a few: see docs/math.md).

    python3 compiler/libm/op_count.py            # a markdown table
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FNS = ["sqrtf", "rsqrtf", "expf", "exp2f", "logf", "log2f", "powf", "sinf", "cosf", "tanf", "tanhf", "erff"]

KINDS = [
    ("float + - *", r"= (fadd|fsub|fmul|fneg) "),
    ("exact float (fabs floor copysign fmin fmax)", r"call float @llvm\.(fabs|floor|ceil|copysign|minnum|maxnum)"),
    ("compare", r"= (fcmp|icmp) "),
    ("int add, sub, logic, shift", r"= (add|sub|and|or|xor|shl|lshr|ashr) "),
    ("int multiply (mul_hi = 1)", r"= mul "),
    ("conversion", r"= (sitofp|uitofp|fptosi|fptoui) "),
    ("select", r"= select "),
    ("table load", r"= load "),
    ("branch", r"\bbr "),
]


def main():
    src = '#include "kc_shim.h"\n#include "%s/compiler/libm/kc_math.kc"\n' % ROOT
    src += "".join("float (*keep_%s)() = (void *)__kc_%s;\n" % (f, f) for f in FNS)
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "m.c")
        ll = os.path.join(d, "m.ll")
        open(c, "w").write(src)
        subprocess.run(["clang", "-O2", "-mllvm", "-inline-threshold=100000", "-ffp-contract=off", "-fno-vectorize", "-fno-slp-vectorize",
                        "-I", os.path.join(ROOT, "tests/libm"), "-S", "-emit-llvm", "-o", ll, c], check=True)
        text = open(ll).read()
    bodies = {}
    for m in re.finditer(r"define internal float @__kc_(\w+)\(.*?\{\n(.*?)\n\}", text, re.S):
        bodies[m.group(1)] = m.group(2)
    print("| function | total | " + " | ".join(k for k, _ in KINDS) + " |")
    print("|---|---|" + "---|" * len(KINDS))
    for f in FNS:
        body = bodies.get(f)
        if body is None:
            print("| %s | (not found) |" % f)
            continue
        # kc_mul_hi in C: zext, zext, mul i64, lshr, trunc; count the i64 mul only
        body = re.sub(r".*= (zext|trunc) .*\n", "", body)
        body = re.sub(r".*= lshr i64 .*\n", "", body)
        counts = [len(re.findall(rx, body)) for _, rx in KINDS]
        print("| %s | %d | %s |" % (f, sum(counts), " | ".join(str(n) for n in counts)))


if __name__ == "__main__":
    sys.exit(main())
