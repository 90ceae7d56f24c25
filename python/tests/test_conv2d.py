"""kcrt.nn.conv2d against torch.nn.functional.conv2d in float64 on fresh
random inputs: 1 x 1 and 3 x 3 (RMVPE's U-Net), strides, paddings and
dilations that differ by axis, groups and depthwise, batch and unbatched,
'same' and 'valid'. Bound: a float32 sum of K = cin / groups x kh x kw
products and the bias, in any order, is within gamma(K + 1) of the sum of
their magnitudes (computed by the same conv on |x|, |w|, |b|)."""
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


CASES = [  # input shape, cout, kernel, kwargs
    ((1, 1, 1, 1), 1, (1, 1), dict()),
    ((2, 3, 17, 9), 5, (3, 3), dict(padding=1)),
    ((1, 16, 64, 32), 16, (3, 3), dict(padding=1, bias=False)),            # RMVPE encoder conv
    ((1, 32, 20, 16), 64, (1, 1), dict()),                                  # RMVPE residual shortcut
    ((1, 4, 11, 6), 6, (3, 2), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2)),
    ((1, 6, 8, 8), 6, (3, 3), dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=6)),  # depthwise
    ((3, 7, 13), 5, (3, 3), dict(padding="same")),                          # unbatched
    ((2, 2, 9, 10), 3, (5, 4), dict(padding="valid", stride=3)),
]


@pytest.mark.parametrize("shape,cout,k,kw", CASES, ids=[str(c[:3]) for c in CASES])
def test_conv2d(ops, rng, shape, cout, k, kw):
    kw = dict(kw)
    bias = kw.pop("bias", True)
    groups = kw.get("groups", 1)
    cin = shape[-3]
    x = rng.standard_normal(shape).astype(np.float32)
    w = (0.3 * rng.standard_normal((cout, cin // groups) + k)).astype(np.float32)
    b = rng.uniform(-1, 1, cout).astype(np.float32) if bias else None
    got = ops.conv2d(x, w, b, **kw)
    assert isinstance(got, kcrt.Tensor)
    tb = torch.from_numpy(b).double() if bias else None
    want = F.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), tb, **kw).numpy()
    mag = F.conv2d(torch.from_numpy(np.abs(x)).double(), torch.from_numpy(np.abs(w)).double(),
                   tb.abs() if bias else None, **kw).numpy()
    kk = cin // groups * k[0] * k[1]
    bound = 2 * (kk + 1) * U / (1 - (kk + 1) * U) * mag + 1e-30
    g = got.numpy().astype(np.float64)
    assert g.shape == want.shape
    assert np.all(np.abs(g - want) <= bound), np.abs(g - want).max()


def test_conv2d_errors(ops, rng):
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    for kw, words in [(dict(groups=3), "expected input"), (dict(stride=0), "positive"),
                      (dict(padding="same", stride=2), "strided"), (dict(dilation=(1, 2, 3)), "list of 2")]:
        with pytest.raises(kcrt.Error, match=words):
            ops.conv2d(x, w, **kw)
    with pytest.raises(kcrt.Error, match="Kernel size can't be greater"):
        ops.conv2d(x[:, :, :2, :2], w)
