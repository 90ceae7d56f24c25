#!/usr/bin/env python3
"""run.py KC LIBKCRT — the mutation check: is each deliberate bug in the
shipped kernels (kernels/) or in kcrt.nn caught by the PyTorch/torchaudio
suite (python/tests)?

For every mutant below: a copy of kernels/ and python/ in a temporary
folder, one edit applied (the text must be found exactly as written, so a
mutant cannot silently stop applying), the package built with KC, and the
tests that cover that op run against the mutant. The mutant is caught
when those tests fail; the same tests on the unchanged copy must pass
first, so a test that fails for another reason catches nothing. Exit 0
only when every mutant is caught; 77 when there is no device.

    tests/mutation/run.py build/tools/kc build/runtime/libkcrt.so [--only NAME]... [--list]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "python", "tests")

# name, what the bug is, file, text, its replacement (every occurrence), the tests (pytest -k of one file),
# and optionally the tests' environment: KCRT_TYPE_DEFAULTS=0 runs the kernels' GPU defaults on lavapipe,
# where kc.yaml's cpu defaults would launch other designs (docs/kernels.md, "kc.yaml")
MUTANTS = [
    ("conv1d-tap", "an off-by-one tap: conv1d reads x one sample late (both designs, float and half)",
     "kernels/include/conv1d.kch", "j * dil - pad", "j * dil - pad + 1",
     "test_nn.py", "test_conv1d and not strided"),
    ("gemm-dropped-term", "the shared register-tile product drops every fourth k term (gemm, conv1d, conv_transpose1d)",
     "kernels/include/mma.kch", "                acc[i][q] += a[i].w * b[3][q];\n", "",
     "test_nn.py", "test_linear or test_conv1d", {"KCRT_TYPE_DEFAULTS": "0"}),
    ("linear-columns", "linear's shared design stores a thread's columns where gemm's would be (4 side by side)",
     "kernels/include/gemm.kch", "(4 * q + j) * (BN / TN) - j;", "4 * q * (BN / TN);",
     "test_nn.py", "test_linear"),
    ("bmm-batch-stride", "bmm reads the first item's B for every item (a lost batch stride)",
     "kernels/bmm.kc", "b * sa, b * sb,", "b * sa, 0,",
     "test_nn.py", "test_matmul"),
    ("convt-group-inputs", "grouped conv_transpose1d reads the first group's input channels for every group",
     "kernels/conv_transpose1d.kc", "c_beg = g * cin_g,", "c_beg = 0,",
     "test_nn.py", "test_conv_transpose1d_groups"),
    ("attention-causal", "an unmasked causal entry: query i also sees key i + 1",
     "kernels/include/attention.kch", "j <= i)", "j <= i + 1)",
     "test_attention.py", "test_sdpa and True"),
    ("decode-causal", "an unmasked causal entry in the decode design: row i also sees key i + 1",
     "kernels/include/attention_decode.kch", "min(lk, i + 1)", "min(lk, i + 2)",
     "test_attention.py", "test_sdpa and True"),
    ("attention-lane", "attention writes lane z of each output chunk into lane w (float and half)",
     "kernels/include/attention.kch", "out[o + 4 * c + 3] = (ATT_T)r.w;", "out[o + 4 * c + 3] = (ATT_T)r.z;",
     "test_f16.py", "test_sdpa_f16"),
    ("mel-band", "a missing mel band: the filterbank's middle band is zero",
     "python/kcrt/nn.py", "            self._kernels[key] = self.ctx.tensor(np.ascontiguousarray(fb.T))",
     "            fb[:, n_mels // 2] = 0\n            self._kernels[key] = self.ctx.tensor(np.ascontiguousarray(fb.T))",
     "test_audio.py", "mel"),
    ("stft-frame", "each STFT frame starts one sample late",
     "kernels/stft.kc", "start + i, pad_mode) * window[i]", "start + i + 1, pad_mode) * window[i]",
     "test_audio.py", "spectrogram"),
    ("yin-cmnd", "YIN's cumulative mean normalised difference scales by tau + 1 instead of tau",
     "kernels/yin.kc", "d[tau] * (float)tau / cm[tau]", "d[tau] * (float)(tau + 1) / cm[tau]",
     "test_yin.py", "not aubio and not espeak"),
    ("sine-phase", "the NSF sine source's phase within a frame lags one sample",
     "kernels/sine_source.kc", "frac_mul(k + 1, r)", "frac_mul(k, r)",
     "test_sine_source.py", ""),
    ("f16-bias", "conv1d on float16 drops its bias",
     "python/kcrt/nn.py", "b = self._zeros(cout) if bias is None else self._float_vector(op, \"bias\", bias, cout)",
     "b = self._zeros(cout)",
     "test_f16.py", "test_conv1d_f16"),
]


def copy_tree(dst):
    shutil.copytree(os.path.join(ROOT, "kernels"), os.path.join(dst, "kernels"))
    shutil.copytree(os.path.join(ROOT, "python"), os.path.join(dst, "python"),
                    ignore=shutil.ignore_patterns("__pycache__", "tests", "*.egg-info", "build"))


def apply(dst, path, old, new):
    full = os.path.join(dst, path)
    with open(full) as f:
        text = f.read()
    if old not in text:
        raise SystemExit("run.py: '%s' is not in %s any more: update the mutant" % (old.strip(), path))
    with open(full, "w") as f:
        f.write(text.replace(old, new))


def build(kc, dst):
    bundle = os.path.join(dst, "rvc.kcb")
    r = subprocess.run([kc, "build", os.path.join(dst, "kernels"), "--quiet", "-o", bundle],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("run.py: the package did not build:\n" + r.stdout + r.stderr)
    return bundle


def pytest(dst, lib, bundle, test_file, select, extra_env=None):
    env = dict(os.environ, KCRT_LIBRARY=lib, KCRT_TEST_RVC_BUNDLE=bundle, KCRT_VALIDATION="1",
               PYTHONPATH=os.path.join(dst, "python"), PYTHONDONTWRITEBYTECODE="1", **(extra_env or {}))
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", os.path.join(TESTS, test_file)]
    if select:
        cmd += ["-k", select]
    r = subprocess.run(cmd, env=env, cwd=dst, capture_output=True, text=True)
    lines = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
    failed = [l for l in lines if l.startswith("FAILED ")]
    first = failed[0][7:].split("python/tests/")[-1] if failed else (lines[-1] if lines else "")
    return r.returncode, first, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kc")
    ap.add_argument("libkcrt")
    ap.add_argument("--only", action="append", default=[], help="only this mutant (again for more)")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    a = ap.parse_args()
    mutants = [m for m in MUTANTS if not a.only or m[0] in a.only]
    if a.list or not mutants:
        for m in MUTANTS:
            print("%-18s %s (%s; %s -k '%s')" % (m[0], m[1], m[2], m[5], m[6]))
        return 0 if mutants else 2
    kc, lib = os.path.abspath(a.kc), os.path.abspath(a.libkcrt)

    with tempfile.TemporaryDirectory(prefix="kc-mutation.") as base:
        clean = os.path.join(base, "clean")
        copy_tree(clean)
        bundle = build(kc, clean)
        print("the unchanged package first: every mutant's tests must pass on it")
        for m in mutants:
            rc, last, lines = pytest(clean, lib, bundle, m[5], m[6], m[7] if len(m) > 7 else None)
            if rc == 5 or (rc == 0 and " passed" not in last):
                print("nothing ran (no device, no torch, or every test skipped): %s" % last)
                return 77
            if rc != 0:
                print("\n".join(lines[-30:]))
                print("run.py: %s -k '%s' fails on the unchanged package: fix that first" % (m[5], m[6]))
                return 1
            print("  %-18s %s -k '%s': %s" % (m[0], m[5], m[6], last))

        print("\n%-18s %-7s %6s  %s" % ("mutant", "result", "time", "caught by (the first failing test)"))
        missed = 0
        for name, what, path, old, new, test_file, select, *env in mutants:
            t0 = time.time()
            dst = os.path.join(base, name)
            copy_tree(dst)
            apply(dst, path, old, new)
            rc, last, _ = pytest(dst, lib, build(kc, dst), test_file, select, env[0] if env else None)
            caught = rc == 1
            missed += not caught
            print("%-18s %-7s %5.0fs  %s" % (name, "caught" if caught else "MISSED", time.time() - t0,
                                             last if caught else "exit %d: %s" % (rc, last)))
            print("%-18s   (%s)" % ("", what))
            shutil.rmtree(dst)
        print("\n%d mutants, %d caught, %d missed" % (len(mutants), len(mutants) - missed, missed))
        return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
