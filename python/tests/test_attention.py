"""kcrt.nn.scaled_dot_product_attention against PyTorch: Debian's torch 1.13
has no F.scaled_dot_product_attention, so the reference is the formula its
documentation gives, softmax(q k^T scale + mask) v, computed with torch's
matmul and softmax in float64 (causal: torch.ones(L, S).tril(), top-left).

Bounds: a score is a d-term dot product, off by gamma(d + 16) of its row's
largest sum |q| |k| scale (times 4: the log2(e) scaling and the shift by
the block maximum); exp turns that into a relative error of each weight,
and the output, a weighted mean of the v_j, is off by twice that times
sum_j p_j |v_j|, plus the rounding of its S-term sums."""
import os

import numpy as np
import pytest

import kcrt
import kcrt.nn

torch = pytest.importorskip("torch")
BUNDLE = os.environ.get("KCRT_TEST_RVC_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_RVC_BUNDLE is not set")
U = float(np.finfo(np.float32).eps) / 2


def gamma(n):
    return n * U / (1 - n * U)


def reference(q, k, v, mask, causal, scale):
    q, k, v = (torch.from_numpy(a).double() for a in (q, k, v))
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if causal:
        s = s.masked_fill(~torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        m = torch.from_numpy(mask)
        s = s.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else s + m.double()
    p = torch.softmax(s, dim=-1)
    out = torch.matmul(p, v)
    mag = torch.matmul(p, v.abs())
    rows = (torch.matmul(q.abs(), k.abs().transpose(-2, -1)) * scale).amax(-1, keepdim=True)
    return out.numpy(), mag.numpy(), rows.numpy()


CASES = [  # lead, L, S, E, Ev, mask, causal
    ((), 1, 1, 1, 1, None, False),
    ((2,), 5, 7, 3, 4, "float", False),
    ((1, 12), 50, 50, 64, 64, None, False),           # ContentVec: 12 heads of 64
    ((2, 3), 33, 17, 64, 32, "float-full", False),
    ((16,), 1, 400, 64, 64, None, False),             # XTTS GPT-2 decode step over a 400-entry cache
    ((4,), 70, 70, 64, 64, None, True),               # its causal prefill
    ((1,), 45, 12, 80, 80, None, True),               # L > S, causal
    ((3,), 9, 40, 7, 9, "bool", False),
    ((1,), 1, 2000, 128, 128, "bool-full", False),
    ((2, 3), 4, 37, 64, 48, "float-full", False),     # a few rows: attention_decode, a mask per problem
    ((2,), 3, 9, 16, 16, None, True),                 # ... causal
]


@pytest.mark.parametrize("lead,lq,lk,d,dv,mask,causal", CASES, ids=[str(c) for c in CASES])
def test_sdpa(ops, rng, lead, lq, lk, d, dv, mask, causal):
    q = rng.standard_normal(lead + (lq, d)).astype(np.float32)
    k = rng.standard_normal(lead + (lk, d)).astype(np.float32)
    v = rng.standard_normal(lead + (lk, dv)).astype(np.float32)
    m = None
    if mask == "float":
        m = rng.uniform(-2, 2, (lq, lk)).astype(np.float32)
    elif mask == "float-full":
        m = rng.uniform(-2, 2, lead + (lq, lk)).astype(np.float32)
    elif mask in ("bool", "bool-full"):
        m = rng.random((lq, lk) if mask == "bool" else lead + (lq, lk)) < 0.7
        m[..., 0] = True  # no row left empty (that is NaN, tested below)
    got = ops.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal)
    assert isinstance(got, kcrt.Tensor)
    scale = float(np.float32(1 / np.sqrt(d)))
    want, mag, rows = reference(q, k, v, m, causal, scale)
    bound = mag * (2 * gamma(d + 16) * 4 * rows + 2 * gamma(lk + 16)) + 1e-30
    g = got.numpy().astype(np.float64)
    assert g.shape == want.shape and np.all(np.isfinite(g))
    err = np.abs(g - want)
    assert np.all(err <= bound), "worst %g > %g" % (err.max(), bound.flat[np.argmax(err - bound)])


def test_sdpa_scale_and_empty_rows(ops, rng):
    q, k, v = (rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(3))
    got = ops.scaled_dot_product_attention(q, k, v, scale=0.3).numpy()
    want, _, _ = reference(q, k, v, None, False, 0.3)
    assert np.abs(got - want).max() < 1e-5
    m = np.ones((4, 4), bool)
    m[2] = False  # torch: a row with every key masked is NaN
    got = ops.scaled_dot_product_attention(q, k, v, attn_mask=m).numpy()
    assert np.isnan(got[:, 2]).all() and np.isfinite(np.delete(got, 2, axis=1)).all()


def test_sdpa_errors(ops, rng):
    q = rng.standard_normal((2, 4, 8)).astype(np.float32)
    for kw, words in [(dict(key=q[:, :, :4]), "same embedding size"), (dict(value=q[:, :3]), "same sequence length"),
                      (dict(dropout_p=0.1), "dropout"), (dict(is_causal=True, attn_mask=np.zeros((4, 4), np.float32)),
                                                         "should not be set"),
                      (dict(attn_mask=np.zeros((3, 4), np.float32)), "does not broadcast"),
                      (dict(query=rng.standard_normal((2, 4, 200)).astype(np.float32),
                            key=rng.standard_normal((2, 4, 200)).astype(np.float32)), "up to 128")]:
        args = dict(query=q, key=q, value=q)
        args.update(kw)
        with pytest.raises(kcrt.Error, match=words):
            ops.scaled_dot_product_attention(**args)
