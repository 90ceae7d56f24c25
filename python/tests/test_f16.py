"""The float16 path (kernels/gemm_f16.kc behind kcrt.nn.linear) against
torch: F.linear on the same float16 values computed in float64, then
rounded to float16 once. Bound: the kernel sums in float (gamma(K + 1) of
|b| + sum |x w|), then rounds to half, as does the reference: the two may
be one half ulp apart (2^-10 relative, 2^-24 near zero). Where the device
has no 16-bit storage the tests are skipped with that reason."""
import os

import numpy as np
import pytest

import kcrt
import kcrt.nn

torch = pytest.importorskip("torch")
F = torch.nn.functional
BUNDLE = os.environ.get("KCRT_TEST_RVC_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_RVC_BUNDLE is not set")
U = float(np.finfo(np.float32).eps) / 2


@pytest.fixture(scope="module")
def ops():
    try:
        ctx = kcrt.open()
    except kcrt.Error as e:
        pytest.skip("no device: %s" % e)
    yield kcrt.nn.Ops(ctx.load(BUNDLE))
    ctx.close()


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    return np.random.default_rng(seed)


def run_or_skip(fn):
    try:
        return fn()
    except kcrt.Error as e:
        if "16-bit storage" in str(e):
            pytest.skip(str(e))
        raise


@pytest.mark.parametrize("lead,k,n,bias", [((1,), 1, 1, True), ((3,), 7, 5, False), ((140,), 768, 96, True),
                                           ((2, 33), 45, 130, True), ((1,), 257, 63, True)])
def test_linear_f16(ops, rng, lead, k, n, bias):
    x = rng.standard_normal(lead + (k,)).astype(np.float16)
    w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float16)
    b = rng.uniform(-1, 1, n).astype(np.float16) if bias else None
    got = run_or_skip(lambda: ops.linear(x, w, b))
    assert got.dtype == np.float16 and got.shape == lead + (n,)
    tb = torch.from_numpy(b).double() if bias else None
    exact = F.linear(torch.from_numpy(x).double(), torch.from_numpy(w).double(), tb).numpy()
    want = exact.astype(np.float16).astype(np.float64)
    mag = F.linear(torch.from_numpy(np.abs(x)).double(), torch.from_numpy(np.abs(w)).double(),
                   tb.abs() if bias else None).numpy()
    bound = 2 * (k + 2) * U * mag + np.abs(want) * 2.0 ** -10 + 2.0 ** -24
    err = np.abs(got.numpy().astype(np.float64) - want)
    assert np.all(err <= bound), err.max()


def test_linear_f16_errors(ops, rng):
    x = rng.standard_normal((2, 4)).astype(np.float16)
    with pytest.raises(kcrt.Error, match="both operands to be float16"):
        ops.linear(x, rng.standard_normal((3, 4)).astype(np.float32))
    with pytest.raises(kcrt.Error, match="cannot be multiplied"):
        run_or_skip(lambda: ops.linear(x, rng.standard_normal((3, 5)).astype(np.float16)))
