"""saxpy.py BUNDLE [n] — the README's Python host: load a bundle, run saxpy
on the best device, check it against numpy.

    kc build examples/saxpy -o saxpy.kcb
    python3 examples/python/saxpy.py saxpy.kcb 100000

Exit status: 0 when the device's result matches numpy's, 1 when it does
not or something failed, 77 when there is no device to run on.
"""
import sys

import numpy as np

import kcrt


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 48000
    try:
        ctx = kcrt.open()
    except kcrt.Error as e:
        if e.status in ("KCRT_ERROR_NO_DEVICE", "KCRT_ERROR_NO_BACKEND"):
            print("saxpy.py: no device: %s" % e, file=sys.stderr)
            return 77
        raise
    k = ctx.load(sys.argv[1]).kernel("saxpy")
    rng = np.random.default_rng()
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = np.float32(2.0) * x + y
    k(n, 2.0, x, y)  # synchronous: y is filled back
    variant, why = k.choice(n, 2.0, x, y)
    ok = np.allclose(y, want, rtol=1e-6, atol=1e-6)
    print("saxpy of %d elements on %s (%s), variant %s (%s): %s" % (
        n, ctx.device_name, ctx.backend, variant, why, "correct" if ok else "WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
