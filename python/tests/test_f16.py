"""The float16 paths (kernels/linear_f16.kc behind kcrt.nn.linear,
conv1d_f16.kc behind conv1d, attention_f16.kc behind
scaled_dot_product_attention) against torch: the same op on the same
float16 values computed in float64, then rounded to float16 once. Bound:
the kernels compute in float (linear and conv1d: gamma(K + 2) of |b| +
sum |x w| over their K = in-features or cin * ks terms; attention: its
float32 bound, test_attention.py's), then round to half, as does the
reference: the two may be one half ulp apart (2^-10 relative, 2^-24 near
zero). Where the device has no 16-bit storage the tests are skipped with
that reason."""
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


def run_or_skip(fn):
    try:
        return fn()
    except kcrt.Error as e:
        if "16-bit storage" in str(e):
            pytest.skip(str(e))
        raise


@pytest.mark.parametrize("lead,k,n,bias", [((1,), 1, 1, True), ((3,), 7, 5, False), ((140,), 768, 96, True),
                                           ((2, 33), 45, 130, True), ((1,), 257, 63, True), ((1, 1), 1028, 70, False)])
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


def half_bound(exact, float_bound):
    """The float kernel's bound plus one half ulp: the kernel and the
    reference each round to half on their own."""
    want = exact.astype(np.float16).astype(np.float64)
    return want, float_bound + np.abs(want) * 2.0 ** -10 + 2.0 ** -24


def check(got, want, bound, dtype=np.float16):
    assert got.dtype == dtype and got.shape == want.shape
    g = got.numpy().astype(np.float64)
    assert np.all(np.isfinite(g))
    err = np.abs(g - want)
    assert np.all(err <= bound), "worst %g > %g" % (err.max(), bound.flat[np.argmax(err - bound)])


@pytest.mark.parametrize("cin,cout,t_in,ks,stride,dil,pad,groups,bias,batch", [
    (1, 1, 1, 1, 1, 1, 0, 1, True, None),
    (3, 5, 17, 3, 1, 1, 1, 1, True, None),
    (7, 2, 101, 5, 1, 2, 0, 1, False, None),
    (13, 11, 257, 7, 1, 3, 9, 1, True, 2),        # odd sizes, a batch
    (128, 64, 1000, 11, 1, 5, 25, 1, True, None),  # a HiFi-GAN resblock's dilated conv, "same"
    (64, 16, 33, 3, 1, 7, 7, 1, False, None),
    (16, 16, 319, 3, 2, 1, 0, 1, True, 1),         # strided and grouped: through the float32 kernels
    (8, 8, 100, 5, 1, 2, 4, 8, True, None),
])
def test_conv1d_f16(ops, rng, cin, cout, t_in, ks, stride, dil, pad, groups, bias, batch):
    lead = (batch,) if batch else ()
    x = rng.standard_normal(lead + (cin, t_in)).astype(np.float16)
    w = (rng.standard_normal((cout, cin // groups, ks)) / np.sqrt(cin // groups * ks)).astype(np.float16)
    b = rng.uniform(-1, 1, cout).astype(np.float16) if bias else None
    kw = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    got = run_or_skip(lambda: ops.conv1d(x, w, b, **kw))
    tb = torch.from_numpy(b).double() if bias else None
    exact = F.conv1d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), tb, **kw).numpy()
    mag = F.conv1d(torch.from_numpy(np.abs(x)).double(), torch.from_numpy(np.abs(w)).double(),
                   tb.abs() if bias else None, **kw).numpy()
    want, bound = half_bound(exact, 2 * (cin // groups * ks + 2) * U * mag)
    check(got, want, bound)


def test_conv1d_f16_errors(ops, rng):
    x = rng.standard_normal((4, 20)).astype(np.float16)
    with pytest.raises(kcrt.Error, match="both operands to be float16"):
        ops.conv1d(x, rng.standard_normal((3, 4, 3)).astype(np.float32))
    with pytest.raises(kcrt.Error, match="expected 3-D input for 'weight'"):
        ops.conv1d(x, rng.standard_normal((3, 4)).astype(np.float16))
    with pytest.raises(kcrt.Error, match="expected bias of size \\[3\\]"):
        run_or_skip(lambda: ops.conv1d(x, rng.standard_normal((3, 4, 3)).astype(np.float16),
                                       np.zeros(5, np.float16)))


ATT_CASES = [  # lead, L, S, E, Ev, mask, causal
    ((), 1, 1, 1, 1, None, False),
    ((2,), 5, 7, 3, 4, "float", False),
    ((1, 12), 50, 50, 64, 64, None, False),           # ContentVec: 12 heads of 64
    ((16,), 1, 400, 64, 64, None, False),             # XTTS GPT-2 decode step over a 400-entry cache
    ((4,), 70, 70, 64, 64, None, True),               # its causal prefill
    ((3,), 9, 40, 7, 9, "bool", False),
    ((2, 3), 33, 17, 128, 32, "float-full", False),
    ((2,), 2, 33, 64, 64, "float", False),            # a few rows: attention_decode_f16
    ((3,), 3, 5, 8, 8, None, True),
]


@pytest.mark.parametrize("lead,lq,lk,d,dv,mask,causal", ATT_CASES, ids=[str(c) for c in ATT_CASES])
def test_sdpa_f16(ops, rng, lead, lq, lk, d, dv, mask, causal):
    q = rng.standard_normal(lead + (lq, d)).astype(np.float16)
    k = rng.standard_normal(lead + (lk, d)).astype(np.float16)
    v = rng.standard_normal(lead + (lk, dv)).astype(np.float16)
    m = None
    if mask == "float":
        m = rng.uniform(-2, 2, (lq, lk)).astype(np.float16)
    elif mask == "float-full":
        m = rng.uniform(-2, 2, lead + (lq, lk)).astype(np.float16)
    elif mask == "bool":
        m = rng.random((lq, lk)) < 0.7
        m[..., 0] = True
    got = run_or_skip(lambda: ops.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal))
    scale = float(np.float32(1 / np.sqrt(d)))
    qd, kd, vd = (torch.from_numpy(a).double() for a in (q, k, v))
    s = torch.matmul(qd, kd.transpose(-2, -1)) * scale
    if causal:
        s = s.masked_fill(~torch.ones(lq, lk, dtype=torch.bool).tril(), float("-inf"))
    if m is not None:
        tm = torch.from_numpy(m)
        s = s.masked_fill(~tm, float("-inf")) if tm.dtype == torch.bool else s + tm.double()
    p = torch.softmax(s, dim=-1)
    exact = torch.matmul(p, vd).numpy()
    mag = torch.matmul(p, vd.abs()).numpy()
    rows = (torch.matmul(qd.abs(), kd.abs().transpose(-2, -1)) * scale).amax(-1, keepdim=True).numpy()
    gam = lambda n: n * U / (1 - n * U)  # noqa: E731
    want, bound = half_bound(exact, mag * (2 * gam(d + 16) * 4 * rows + 2 * gam(lk + 16)) + 1e-30)
    check(got, want, bound)


def test_sdpa_f16_errors(ops, rng):
    q = rng.standard_normal((2, 4, 8)).astype(np.float16)
    with pytest.raises(kcrt.Error, match="same dtype"):
        ops.scaled_dot_product_attention(q, q.astype(np.float32), q)
    with pytest.raises(kcrt.Error, match="bool or float16"):
        ops.scaled_dot_product_attention(q, q, q, attn_mask=np.zeros((4, 4), np.float32))
