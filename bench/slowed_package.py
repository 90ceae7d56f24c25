#!/usr/bin/env python3
"""slowed_package.py BUILD [--slowdown PCT] [--checks N] [--kernel K]... — shows that
bench/ci.sh's second step catches a slowdown of any one kernel of the
shipped package (docs/benchmarks.md).

Copies kernels/ to BUILD/bench/slowed-package/ with every kernel slowed,
and measures that bundle against bench/accepted-package.kcb as bench/ci.sh
does. Each benchmark's verdict depends only on its own kernel (its time
against the same kernel of the accepted bundle, interleaved), so one bundle
with every kernel slowed shows each slowdown caught alone.

Without --slowdown, every kernel does its work 4 times: its grid gets that
many times the workgroups, and the others compute what the first do (and
write the same values). A kernel whose grid's z is 1 gets z = 4 (nothing in
it reads the z index); the others get 4 times their y and read their y
index modulo the original count, or, where the kernel's file does not read
its y index (bmm's is in gemm.kch), 4 times their z, read modulo the
original count (and a grid-stride loop's kc_num_groups(2) read as that
count). One kc bench run at 30% must read every kernel as a regression.

With --slowdown PCT, every invocation of a kernel first spins through a
loop of dependent multiply-adds (64 an iteration, at most 16,384
iterations: see SPIN_BODY) whose result it never stores, and the loop
count is calibrated per kernel until the kernel's time reads PCT .. 1.5 PCT
percent slower than the accepted one (up to 5 measurements, kc bench
--against with no threshold); then bench/ci.sh's check of the package (20%,
15 rounds, remeasured) runs N times (default 3) on that bundle. Writes
BUILD/bench/slowed-package.md and exits 0 when every kernel was caught in
every check. --kernel limits either way to the kernels named.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Without --slowdown: every kernel does its work four times. Twice made
# some kernels only 1.0-1.45x slower on lavapipe (the copies re-read what
# the first ones left in the CPU's caches; a one-row kernel's time is its
# dispatch): four make every kernel's copy cost well over 30%.
COPIES = 4
# With --slowdown: a spin is one loop iteration of SPIN_BODY dependent
# multiply-adds. lavapipe silently ends every loop of a shader once their
# iterations together pass 65,535 (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS;
# kernels/attention.kc), and then computes the wrong thing fast: a spin
# loop of 262,144 single multiply-adds made attention *2 times faster*
# and wrong. Spins of 64 multiply-adds, at most 16,384 of them, leave the
# kernel's own loops 49,151 iterations.
SPIN_BODY = 64
FIRST_SPINS = 1
MAX_SPINS = 16384
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


def body_start(source, name):
    """Where the kernel function's body starts: just past the first "{"
    after KC_KERNEL (its parameter list holds no braces)."""
    k = source.find("KC_KERNEL")
    brace = source.find("{", k) if k >= 0 else -1
    if brace < 0:
        sys.exit("slowed_package.py: %s: no KC_KERNEL function body" % name)
    return brace + 1


def output_of(source, name):
    """The kernel's first written buffer, as (type, name)."""
    k = source.find("KC_KERNEL")
    lo = source.find("(", source.find("void", k))
    hi = source.find("{", lo)
    params = source[lo + 1:source.rfind(")", lo, hi)]
    for param in re.split(r",(?![^\[]*\])", params):
        m = re.match(r"\s*(\w+)\s+(\w+)\s*\[", param)
        if m and "const" not in param:
            return m.group(1), m.group(2)
    sys.exit("slowed_package.py: %s: no written buffer among its parameters" % name)


CAST = {"float": "%s", "half": "(half)%s", "float4": "kc_float4(%s, %s, %s, %s)"}


def slow_spin(source, name, spins):
    """The kernel with SPINS x SPIN_BODY dependent multiply-adds at the top of every
    invocation, whose result is stored only if it is negative, which it
    never is (so nothing it computes changes). The time this adds grows in
    proportion to SPINS, which is what calibrating needs: lavapipe runs a
    group whose every invocation returned early through all its code with
    the lanes masked off, so skipping copied groups cannot add a fraction
    of a kernel's time there."""
    kind, out = output_of(source, name)
    if kind not in CAST:
        sys.exit("slowed_package.py: %s: cannot store a float into %s %s[]" % (name, kind, out))
    value = CAST[kind] % ((("kc_slow_v",) * CAST[kind].count("%s")))
    at = body_start(source, name)
    line = ("\n    { float kc_slow_v = (float)kc_local_id(0);"
            " for (int kc_slow_i = 0; kc_slow_i < %d; kc_slow_i++) {%s }"
            " if (kc_slow_v < 0.0f) %s[0] = %s; }" %
            (spins, " kc_slow_v = kc_slow_v * 0.999f + 1.0f;" * SPIN_BODY, out, value))
    return source[:at] + line + source[at:]


def slow_copies(source, name, copies):
    """The kernel with its grid copied COPIES times over."""
    lo, hi = grid_of(source, name)
    x, y, z = (" ".join(a.split()) for a in split_args(source[lo:hi]))
    if z == "1":
        return source[:lo] + "%s, %s, %d" % (x, y, copies) + source[hi:]
    if foldable(source, 1) and "kc_num_groups(1)" not in source:
        return fold(source[:lo] + "%s, %d * (%s), %s" % (x, copies, y, z) + source[hi:], 1, y)
    if foldable(source, 2):
        return fold(source[:lo] + "%s, %s, %d * (%s)" % (x, y, copies, z) + source[hi:], 2, z)
    sys.exit("slowed_package.py: %s: cannot fold its y or z index (read %d and %d times in the file)" %
             (name, source.count("kc_group_id(1)"), source.count("kc_group_id(2)")))


def build(kc, build_dir, slowing):
    """BUILD/bench/slowed-package.kcb, kernel k slowed by slowing[k](text)."""
    out = os.path.join(build_dir, "bench", "slowed-package")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "kernels"), out)
    for name, slowed in slowing.items():
        path = os.path.join(out, name + ".kc")
        with open(path) as src:
            text = src.read()
        with open(path, "w") as dst:
            dst.write(slowed(text, name))
    bundle = os.path.join(build_dir, "bench", "slowed-package.kcb")
    subprocess.run([kc, "build", out, "--quiet", "-o", bundle], check=True)
    return bundle


def spinning(spins):
    return {k: (lambda text, name, n=n: slow_spin(text, name, n)) for k, n in spins.items()}


def bench(kc, bundle, threshold, json_path, names):
    """kc bench as bench/ci.sh's second step runs it, on kernels NAMES;
    {kernel: (change, verdict)}."""
    only = [a for k in names for a in ("--kernel", k)]
    run = subprocess.run([kc, "bench", bundle, "--smallest", "--against",
                          os.path.join(HERE, "accepted-package.kcb"), "--max-regression", threshold,
                          "--repeat", "15", "--quiet", "--json", json_path] + only,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode not in (0, 1) or not os.path.exists(json_path):
        sys.exit("slowed_package.py: kc bench failed:\n" + run.stdout)
    with open(json_path) as f:
        doc = json.load(f)
    return {b["kernel"]: (b["comparison"]["change"], b["verdict"]) for b in doc["benchmarks"]}


def calibrate(kc, build_dir, names, target):
    """Per kernel, the spins that make its time read target .. 1.5 target
    percent slower: the added time grows with the spins, so each step
    scales them by the shortfall (at most 16 times at once)."""
    spins = {k: FIRST_SPINS for k in names}
    history = {k: [] for k in names}
    json_path = os.path.join(build_dir, "bench", "slowed-calibrate.json")
    for step in range(5):
        bundle = build(kc, build_dir, spinning(spins))
        # a threshold nobody reaches: one measurement each, no remeasuring
        got = bench(kc, bundle, "10000%", json_path, names)
        off = []
        for k in names:
            change = 100 * got[k][0]
            history[k].append((spins[k], change))
            if not target <= change <= 1.5 * target:
                off.append(k)
        print("slowed_package.py: calibration %d: %d of %d kernels outside %d .. %d%%: %s" %
              (step + 1, len(off), len(names), target, 1.5 * target, ", ".join(off) or "none"), flush=True)
        if not off or step == 4:
            break  # the bundle checked is the one last measured
        for k in off:
            scale = min(16.0, 1.25 * target / max(history[k][-1][1], 1.0))
            spins[k] = max(1, min(MAX_SPINS, int(round(spins[k] * scale))))
    return spins, history


def main():
    ap = argparse.ArgumentParser(description="Slowed copies of the shipped kernels against bench/ci.sh's check.")
    ap.add_argument("build")
    ap.add_argument("--slowdown", type=int, help="calibrate each kernel to read this percent slower")
    ap.add_argument("--checks", type=int, default=3, help="bench/ci.sh checks to run after calibrating")
    ap.add_argument("--kernel", action="append", help="only this kernel (again for more; default: all)")
    args = ap.parse_args()
    kc = os.path.join(args.build, "tools", "kc")
    names = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "kernels")) if f.endswith(".kc"))
    unknown = set(args.kernel or []) - set(names)
    if unknown:
        sys.exit("slowed_package.py: no such kernel in kernels/: " + ", ".join(sorted(unknown)))
    names = sorted(args.kernel) if args.kernel else names
    if args.slowdown is None:
        copied = {k: (lambda text, name: slow_copies(text, name, COPIES)) for k in names}
        bundle = build(kc, args.build, copied)
        got = bench(kc, bundle, "30%", os.path.join(args.build, "bench", "slowed-package.json"), names)
        missed = [k for k in names if got[k][1] != "regression"]
        for k in names:
            print("%-24s %+7.1f%%  %s" % (k, 100 * got[k][0], got[k][1]))
        print("slowed_package.py: %d of %d kernels doing their work 4 times read as regressions%s" %
              (len(names) - len(missed), len(names), "" if not missed else "; missed: " + ", ".join(missed)))
        return 0 if not missed else 1

    spins, history = calibrate(kc, args.build, names, args.slowdown)
    bundle = build(kc, args.build, spinning(spins))
    checks = []
    for i in range(args.checks):
        # bench/ci.sh's second step, exactly: 20%, 15 rounds, remeasured
        got = bench(kc, bundle, "20%", os.path.join(args.build, "bench", "slowed-check-%d.json" % (i + 1)), names)
        checks.append(got)
        caught = sum(got[k][1] == "regression" for k in names)
        print("slowed_package.py: check %d: %d of %d caught" % (i + 1, caught, len(names)), flush=True)
    lines = ["| kernel | spins | calibration: spins, time change | %s |" %
             " | ".join("check %d" % (i + 1) for i in range(len(checks))),
             "|---|---:|---|" + "---|" * len(checks)]
    missed = 0
    for k in names:
        cal = ", ".join("%d: %+.1f%%" % (n, c) for n, c in history[k])
        cells = []
        for got in checks:
            change, verdict = got[k]
            missed += verdict != "regression"
            cells.append("%+.1f%% %s" % (100 * change, "caught" if verdict == "regression" else verdict))
        lines.append("| %s | %d | %s | %s |" % (k, spins[k], cal, " | ".join(cells)))
    total = len(names) * len(checks)
    lo, hi = args.slowdown, 1.5 * args.slowdown
    off = [k for k in names if not lo <= history[k][-1][1] <= hi]
    lines.append("")
    lines.append("%d of %d slowed kernels caught (%d checks of %d kernels, calibrated to read %d .. %d%% "
                 "slower; %s)" % (total - missed, total, len(checks), len(names), lo, hi,
                                  "all within it" if not off else "outside it: " + ", ".join(off)))
    report = "\n".join(lines) + "\n"
    with open(os.path.join(args.build, "bench", "slowed-package.md"), "w") as f:
        f.write(report)
    print(report)
    return 0 if missed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
