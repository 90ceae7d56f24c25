"""kcrt.nn against PyTorch (torch.nn.functional) on fresh random inputs with
awkward sizes: every op of the shipped kernels, every argument its
signature allows, and torch's errors for what is wrong.

Error bounds come from the reduction length: a float32 sum of K products
computed in any order is within K * eps * sum|terms| of the exact value
(the standard forward bound, gamma_K), so each element is checked against
    |kcrt - torch| <= 2 K eps * (|x| conv |w| + |b|) + 1e-30,
with the absolute-value reference computed in float64. Layer norm and
softmax are bounded relative to their output with their row length.

KCRT_TEST_RVC_BUNDLE is a bundle of kc's kernels/ (default variants)."""
import os

import numpy as np
import pytest

import kcrt

torch = pytest.importorskip("torch")
F = torch.nn.functional
BUNDLE = os.environ.get("KCRT_TEST_RVC_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_RVC_BUNDLE is not set")
EPS = float(np.finfo(np.float32).eps)


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(got, want, bound):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert np.all(np.isfinite(got))
    if got.size == 0:
        return
    err = np.abs(got - want)
    worst = np.argmax(err - bound)
    assert np.all(err <= bound), "at %s: %g vs %g (error %g > bound %g)" % (
        np.unravel_index(worst, err.shape), got.flat[worst], want.flat[worst], err.flat[worst], bound.flat[worst])


def t(a):
    return torch.from_numpy(a)


def centring(x, ndims, weight, eps):
    """The part of a normalisation's error that no summation order avoids:
    x - mean carries the float mean's rounding, u (|mean| + |x|), which
    1 / sqrt(var + eps) magnifies (a row of nearly equal values with a
    large mean). Per element, over the last ndims dimensions, times |weight|."""
    axes = tuple(range(x.ndim - ndims, x.ndim))
    xd = x.astype(np.float64)
    mean = xd.mean(axis=axes, keepdims=True)
    sd = np.sqrt(xd.var(axis=axes, keepdims=True) + eps)
    term = 8 * EPS * (np.abs(mean) + np.abs(xd)) / sd
    return term * (np.abs(weight) if weight is not None else 1.0)


@pytest.mark.parametrize("cin,cout,t_in,ks,dil,pad,bias,batch", [
    (1, 1, 1, 1, 1, 0, True, None), (3, 5, 17, 3, 1, 1, True, None), (7, 2, 101, 5, 2, 0, False, None),
    (13, 11, 257, 7, 3, 9, True, None), (32, 48, 1000, 11, 5, 25, True, None), (5, 3, 31, 3, 1, 4, True, 3),
    (2, 4, 10, 4, 1, 0, True, 1), (64, 16, 33, 3, 7, 7, False, None)])
def test_conv1d(ops, rng, cin, cout, t_in, ks, dil, pad, bias, batch):
    x = rand(rng, *((batch,) if batch else ()), cin, t_in)
    w = rand(rng, cout, cin, ks)
    b = rand(rng, cout) if bias else None
    got = ops.conv1d(x, w, b, padding=pad, dilation=dil).numpy()
    want = F.conv1d(t(x).double(), t(w).double(), t(b).double() if bias else None, padding=pad, dilation=dil)
    absref = F.conv1d(t(np.abs(x)).double(), t(np.abs(w)).double(), t(np.abs(b)).double() if bias else None,
                      padding=pad, dilation=dil)
    check(got, want.numpy(), 2 * cin * ks * EPS * absref.numpy() + 1e-30)


@pytest.mark.parametrize("cin,cout,t_in,ks,stride,dil,pad,groups,batch", [
    (1, 16, 1601, 10, 5, 1, 0, 1, 2),     # ContentVec's first feature-extractor layer (512 in the model)
    (16, 16, 319, 3, 2, 1, 0, 1, None),   # its later layers: kernel 3, stride 2
    (8, 8, 100, 5, 1, 2, 4, 8, 1),        # depthwise
    (6, 4, 57, 4, 3, 2, 3, 2, 3),         # groups of 3 channels, stride and dilation
])
def test_conv1d_strided_and_grouped(ops, rng, cin, cout, t_in, ks, stride, dil, pad, groups, batch):
    x = rand(rng, *((batch,) if batch else ()), cin, t_in)
    w = rand(rng, cout, cin // groups, ks)
    b = rand(rng, cout)
    kw = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    got = ops.conv1d(x, w, b, **kw).numpy()
    want = F.conv1d(t(x).double(), t(w).double(), t(b).double(), **kw)
    absref = F.conv1d(t(np.abs(x)).double(), t(np.abs(w)).double(), t(np.abs(b)).double(), **kw)
    check(got, want.numpy(), 2 * (cin // groups * ks + 1) * EPS * absref.numpy() + 1e-30)


def test_conv1d_same_and_valid(ops, rng):
    x, w = rand(rng, 4, 50), rand(rng, 6, 4, 5)
    got = ops.conv1d(x, w, padding="same", dilation=2).numpy()
    want = F.conv1d(t(x)[None], t(w), padding="same", dilation=2)[0].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert ops.conv1d(x, w, padding="valid").shape == (6, 46)
    assert ops.conv1d(x, w, padding=(2,)).shape == (6, 50)


@pytest.mark.parametrize("batch", [None, 2])
def test_conv1d_leaky_is_conv1d_then_leaky_relu(ops, rng, batch):
    """The models' conv1d with the kernel's own leaky ReLU (its slope) against torch's two ops."""
    x = rand(rng, *((batch,) if batch else ()), 24, 300)
    w, b = rand(rng, 16, 24, 7), rand(rng, 16)
    got = ops._conv1d_leaky(x, w, b, 9, 3, 0.1).numpy()
    want = F.leaky_relu(F.conv1d(t(x).double(), t(w).double(), t(b).double(), padding=9, dilation=3), 0.1)
    absref = F.conv1d(t(np.abs(x)).double(), t(np.abs(w)).double(), t(np.abs(b)).double(), padding=9, dilation=3)
    check(got, want.numpy(), 2 * 24 * 7 * EPS * absref.numpy() + 1e-30)
    assert (want.numpy() < 0).any()  # the slope was exercised


@pytest.mark.parametrize("cin,cout,t_in,ks,stride,pad,out_pad,bias", [
    (1, 1, 1, 1, 1, 0, 0, True), (4, 3, 9, 3, 2, 1, 1, True), (8, 5, 23, 16, 10, 3, 0, True),
    (6, 6, 40, 5, 3, 2, 2, False), (3, 7, 2, 4, 4, 0, 3, True)])
def test_conv_transpose1d(ops, rng, cin, cout, t_in, ks, stride, pad, out_pad, bias):
    x, w = rand(rng, cin, t_in), rand(rng, cin, cout, ks)
    b = rand(rng, cout) if bias else None
    kw = dict(stride=stride, padding=pad, output_padding=out_pad)
    got = ops.conv_transpose1d(x, w, b, **kw).numpy()
    bb = lambda v: t(v).double() if bias else None  # noqa: E731
    want = F.conv_transpose1d(t(x).double()[None], t(w).double(), bb(b), **kw)[0].numpy()
    absref = F.conv_transpose1d(t(np.abs(x)).double()[None], t(np.abs(w)).double(), bb(np.abs(b) if bias else b),
                                **kw)[0].numpy()
    check(got, want, 2 * cin * ks * EPS * absref + 1e-30)


@pytest.mark.parametrize("cin,cout_g,t_in,ks,stride,pad,out_pad,groups,dil,batch", [
    (4, 3, 9, 3, 2, 1, 1, 2, 1, None),    # groups of 2 channels
    (6, 1, 17, 4, 2, 1, 0, 6, 1, 2),      # depthwise, a batch
    (3, 5, 11, 3, 1, 0, 0, 1, 2, None),   # dilated
    (8, 2, 13, 5, 3, 2, 1, 4, 3, None),   # both, output padding under the dilation
])
def test_conv_transpose1d_groups_dilation(ops, rng, cin, cout_g, t_in, ks, stride, pad, out_pad, groups, dil, batch):
    x, w, b = rand(rng, *((batch,) if batch else ()), cin, t_in), rand(rng, cin, cout_g, ks), rand(rng, cout_g * groups)
    kw = dict(stride=stride, padding=pad, output_padding=out_pad, groups=groups, dilation=dil)
    got = ops.conv_transpose1d(x, w, b, **kw).numpy()
    tx = t(x).double() if batch else t(x).double()[None]
    want = F.conv_transpose1d(tx, t(w).double(), t(b).double(), **kw).numpy()
    absref = F.conv_transpose1d(tx.abs(), t(np.abs(w)).double(), t(np.abs(b)).double(), **kw).numpy()
    if not batch:
        want, absref = want[0], absref[0]
    check(got, want, 2 * (cin // groups) * ks * EPS * absref + 1e-30)
    with pytest.raises(kcrt.Error, match="expected weight to be divisible by 4"):
        ops.conv_transpose1d(rand(rng, 6, 5), rand(rng, 6, 1, 3), groups=4)


@pytest.mark.parametrize("lead,k,n,bias", [((1,), 7, 5, True), ((3,), 1, 1, True), ((140,), 768, 67, True),
                                          ((2, 3), 33, 17, False), ((1,), 1030, 3, False), ((5,), 4, 9, True)])
def test_linear(ops, rng, lead, k, n, bias):
    x, w = rand(rng, *lead, k), rand(rng, n, k)
    b = rand(rng, n) if bias else None
    got = ops.linear(x, w, b).numpy()
    bb = lambda v: t(v).double() if bias else None  # noqa: E731
    want = F.linear(t(x).double(), t(w).double(), bb(b)).numpy()
    absref = F.linear(t(np.abs(x)).double(), t(np.abs(w)).double(), bb(np.abs(b) if bias else b)).numpy()
    check(got, want, 2 * k * EPS * absref + 1e-30)
    got1 = ops.linear(x, w[0], None).numpy()  # a 1-D weight: one output per row
    assert got1.shape == lead


def test_linear_reads_the_weight_where_it_is(ops, rng, monkeypatch):
    # linear runs on W as torch keeps it: nothing is read back to the host (a sync and two trips of the weight
    # per layer on a GPU), for 6 rows and for one (a decode step), in float32 and in float16 (a float32 bias)
    x, w, b = rand(rng, 6, 20), rand(rng, 9, 20), rand(rng, 9)
    mag = np.abs(x) @ np.abs(w).T + np.abs(b)
    kw, kb, hw = ops.ctx.tensor(w), ops.ctx.tensor(b), ops.ctx.tensor(w.astype(np.float16))
    for rows in (6, 1):
        kx, hx = ops.ctx.tensor(x[:rows]), ops.ctx.tensor(x[:rows].astype(np.float16))
        monkeypatch.setattr(kcrt.Tensor, "numpy", lambda self: pytest.fail("linear read a tensor back to the host"))
        y = ops.linear(kx, kw, kb)
        try:
            yh = ops.linear(hx, hw, kb)
        except kcrt.Error as e:
            if "16-bit storage" not in str(e):
                raise
            yh = None
        monkeypatch.undo()
        check(y.numpy(), x[:rows] @ w.T + b, 2 * 20 * EPS * mag[:rows] + 1e-30)
        if yh is not None:
            xh, wh = x[:rows].astype(np.float16).astype(np.float64), w.astype(np.float16).astype(np.float64)
            want = xh @ wh.T + b
            check(yh.numpy().astype(np.float64), want, np.abs(want) * 2.0 ** -10 + 22 * EPS * mag[:rows] + 2.0 ** -24)


@pytest.mark.parametrize("batch", [1, 3])
def test_batched_convolutions_read_nothing_back(ops, rng, monkeypatch, batch):
    # conv1d and conv_transpose1d on (N, C, T): a batch of one is the input's own buffer, more items are split
    # and stacked by copies on the device; nothing goes through the host (a sync and a round trip on a GPU)
    x, w, wt, b = rand(rng, batch, 3, 40), rand(rng, 4, 3, 5), rand(rng, 3, 2, 4), rand(rng, 4)
    kx, kw, kwt, kb = (ops.ctx.tensor(a) for a in (x, w, wt, b))
    monkeypatch.setattr(kcrt.Tensor, "numpy", lambda self: pytest.fail("a convolution read a tensor back"))
    y, yt = ops.conv1d(kx, kw, kb, padding=2), ops.conv_transpose1d(kx, kwt, None, stride=2)
    monkeypatch.undo()
    assert y.shape == (batch, 4, 40) and yt.shape == (batch, 2, 82)
    mag = F.conv1d(t(np.abs(x)), t(np.abs(w)), t(np.abs(b)), padding=2).numpy()
    check(y.numpy(), F.conv1d(t(x), t(w), t(b), padding=2).numpy(), 2 * 17 * EPS * mag + 1e-30)
    magt = F.conv_transpose1d(t(np.abs(x)), t(np.abs(wt)), stride=2).numpy()
    check(yt.numpy(), F.conv_transpose1d(t(x), t(wt), stride=2).numpy(), 2 * 10 * EPS * magt + 1e-30)


@pytest.mark.parametrize("shape,norm,affine", [((1, 1), 1, True), ((3, 768), 768, True), ((2, 5, 7), 7, False),
                                               ((4, 6, 10), (6, 10), True), ((1000,), 1000, True)])
def test_layer_norm(ops, rng, shape, norm, affine):
    x = rand(rng, *shape) * 3 + 5  # a large mean: cancellation would show
    ns = (norm,) if isinstance(norm, int) else norm
    g = rand(rng, *ns) if affine else None
    b = rand(rng, *ns) if affine else None
    got = ops.layer_norm(x, norm, g, b, eps=1e-5).numpy()
    want = F.layer_norm(t(x).double(), ns, t(g).double() if affine else None, t(b).double() if affine else None,
                        eps=1e-5).numpy()
    n = int(np.prod(ns))
    scale = (np.abs(g) if affine else 1.0) * 4 + (np.abs(b) if affine else 0.0)
    check(got, want, 8 * n * EPS * np.broadcast_to(scale, x.shape) + centring(x, len(ns), g if affine else None, 1e-5))


@pytest.mark.parametrize("shape,groups,affine", [((1, 1, 2), 1, True), ((2, 4, 9), 2, True), ((1, 6, 33), 3, False),
                                                 ((3, 512, 10), 32, True), ((2, 8), 4, True), ((1, 5, 7), 5, True),
                                                 ((2, 4, 3, 5), 2, True), ((1, 512, 3199), 512, True)])
def test_group_norm(ops, rng, shape, groups, affine):
    x = rand(rng, *shape) * 3 + 5
    c = shape[1]
    w = rand(rng, c) if affine else None
    b = rand(rng, c) if affine else None
    got = ops.group_norm(x, groups, w, b, eps=1e-5).numpy()
    want = F.group_norm(t(x).double(), groups, t(w).double() if affine else None, t(b).double() if affine else None,
                        eps=1e-5).numpy()
    n = x.size // (shape[0] * groups)
    chan = (np.abs(w) * 4 + np.abs(b)).reshape((1, c) + (1,) * (len(shape) - 2)) if affine else 4.0
    grouped = x.reshape(shape[0], groups, -1)
    wfull = np.broadcast_to(np.abs(w).reshape((1, c) + (1,) * (len(shape) - 2)), x.shape) if affine else None
    term = centring(grouped, 1, None, 1e-5).reshape(x.shape) * (wfull if affine else 1.0)
    check(got, want, 8 * n * EPS * np.broadcast_to(chan, x.shape) + term + 1e-6)


def test_group_norm_errors(ops, rng):
    with pytest.raises(kcrt.Error, match="Expected more than 1 value per channel"):
        ops.group_norm(rand(rng, 1, 4, 1), 2)
    with pytest.raises(kcrt.Error, match="divisible by num_groups"):
        ops.group_norm(rand(rng, 1, 6, 4), 4)
    with pytest.raises(kcrt.Error, match="at least 2 dimensions"):
        ops.group_norm(rand(rng, 6), 2)
    with pytest.raises(kcrt.Error, match="expected weight of size"):
        ops.group_norm(rand(rng, 1, 6, 4), 2, rand(rng, 5))


@pytest.mark.parametrize("shape", [(1,), (5,), (3, 140), (2, 3, 1025), (7, 1)])
def test_softmax(ops, rng, shape):
    x = rand(rng, *shape) * 4
    x.flat[0] = -np.inf  # a masked entry
    got = ops.softmax(x, dim=-1).numpy()
    want = F.softmax(t(x).double(), dim=-1).numpy()
    n = shape[-1]
    if n == 1:
        assert np.isnan(got.flat[0])  # a row of only -inf: 0/0, as torch
        got, want = got.reshape(-1)[1:], want.reshape(-1)[1:]
    check(got, want, 4 * n * EPS * np.abs(want) + 1e-7)


@pytest.mark.parametrize("shape", [(1,), (5,), (3, 140), (2, 3, 1025), (7, 1), (1, 1026)])
def test_log_softmax(ops, rng, shape):
    x = rand(rng, *shape) * 4
    x.flat[0] = -np.inf  # a masked entry: -inf out
    got = ops.log_softmax(x, dim=-1).numpy()
    want = F.log_softmax(t(x).double(), dim=-1).numpy()
    n = shape[-1]
    if n == 1:
        assert np.isnan(got.flat[0])  # a row of only -inf, as torch
        got, want, x = got.reshape(-1)[1:], want.reshape(-1)[1:], x.reshape(-1)[1:]
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite], want[~finite])
    shifted = np.abs(x - np.max(x, axis=-1, keepdims=True)) if x.size else x
    bound = 2 * EPS * shifted + 4 * n * EPS + 4 * EPS * np.abs(want)
    check(got[finite], want[finite], bound[finite])


UNARY = [("relu", lambda x: F.relu(x), {}), ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), {"negative_slope": 0.2}),
         ("leaky_relu", lambda x: F.leaky_relu(x), {}), ("sigmoid", torch.sigmoid, {}), ("tanh", torch.tanh, {}),
         ("silu", F.silu, {}), ("gelu", F.gelu, {}), ("gelu", lambda x: F.gelu(x, approximate="tanh"),
                                                    {"approximate": "tanh"})]


@pytest.mark.parametrize("name,ref,kw", UNARY, ids=[u[0] + str(u[2]) for u in UNARY])
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1031), (2, 3, 4, 5)])
def test_unary(ops, rng, name, ref, kw, shape):
    x = rand(rng, *shape) * 5
    x.flat[0] = -30.0  # the far tails
    x.flat[-1] = 30.0
    got = getattr(ops, name)(x, **kw).numpy()
    want = ref(t(x).double()).numpy()
    # kc's libm (<= 1.31 ulp) and a few roundings; GELU's 1 + erf cancels below -3: in units of |x| there
    check(got, want, 16 * EPS * (np.abs(x) + np.abs(want)) + 1e-37)


@pytest.mark.parametrize("op", ["add", "mul"])
def test_binary(ops, rng, op):
    x, z = rand(rng, 4, 33), rand(rng, 4, 33)
    ref = (lambda a, b, **k: torch.add(a, b, **k)) if op == "add" else torch.mul
    cases = [((x, z), {}), ((x, 2.5), {}), ((x, rand(rng, 33)), {}), ((x, rand(rng, 4, 1)), {}),
             ((1.5, z), {})]
    if op == "add":
        cases += [((x, z), {"alpha": -0.5}), ((x, 3.0), {"alpha": 2}), ((2.0, z), {"alpha": 3})]
    for (a, b), kw in cases:
        got = getattr(ops, op)(a, b, **kw).numpy()
        ta = t(a).double() if isinstance(a, np.ndarray) else a
        tb = t(np.ascontiguousarray(b)).double() if isinstance(b, np.ndarray) else b
        want = ref(ta, tb, **kw).numpy()
        big = np.abs(np.broadcast_to(a, want.shape)) + np.abs(np.broadcast_to(b, want.shape)) * abs(kw.get("alpha", 1))
        check(got, want, 4 * EPS * (big + np.abs(want)) + 1e-37)
    tx, tz = ops.ctx.tensor(x), ops.ctx.tensor(z)
    np.testing.assert_allclose(getattr(ops, op)(tx, tz).numpy(), ref(t(x), t(z)).numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(kcrt.Error, match="must match the size"):
        getattr(ops, op)(x, rand(rng, 5))
    with pytest.raises(kcrt.Error, match="broadcasting a device tensor"):
        getattr(ops, op)(tx, ops.ctx.tensor(rand(rng, 33)))


@pytest.mark.parametrize("a,b", [((1, 1), (1, 1)), ((3, 7), (7, 5)), ((140, 64), (64, 500)), ((7,), (7, 3)),
                                 ((4, 7), (7,)), ((7,), (7,)), ((2, 3, 5, 9), (9, 4)), ((2, 1, 5, 9), (3, 9, 4)),
                                 ((12, 50, 64), (12, 64, 50)), ((7,), (2, 7, 3)), ((1, 5, 9), (4, 9, 6)),
                                 ((4, 1, 3, 5), (1, 2, 5, 2))])
def test_matmul(ops, rng, a, b):
    x, w = rand(rng, *a), rand(rng, *b)
    got = ops.matmul(x, w)
    want = torch.matmul(t(x).double(), t(w).double()).numpy()
    mag = torch.matmul(t(np.abs(x)).double(), t(np.abs(w)).double()).numpy()
    assert got.shape == want.shape
    check(got.numpy(), want, 2 * (a[-1] + 1) * EPS * mag + 1e-30)
    if len(a) == 3 and len(b) == 3 and a[0] == b[0]:
        np.testing.assert_array_equal(ops.bmm(x, w).numpy(), got.numpy())


def test_matmul_errors(ops, rng):
    with pytest.raises(kcrt.Error, match="cannot be multiplied \\(3x4 and 5x2\\)"):
        ops.matmul(rand(rng, 3, 4), rand(rng, 5, 2))
    with pytest.raises(kcrt.Error, match="must match the size"):
        ops.matmul(rand(rng, 2, 3, 4), rand(rng, 3, 4, 2))
    with pytest.raises(kcrt.Error, match="batch1 must be a 3D tensor"):
        ops.bmm(rand(rng, 3, 4), rand(rng, 1, 4, 2))
    with pytest.raises(kcrt.Error, match="Expected size for first two dimensions of batch2"):
        ops.bmm(rand(rng, 2, 3, 4), rand(rng, 2, 5, 2))


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1031)])
def test_log_exp_clamp(ops, rng, shape):
    x = rand(rng, *shape) * 5
    x.flat[0] = 0.0  # log(0) = -inf
    got = ops.log(x).numpy()
    want = torch.log(t(x).double()).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(np.isinf(got), np.isinf(want))
    ok = np.isfinite(want)
    check(got[ok], want[ok], 16 * EPS * (np.abs(x[ok]) + np.abs(want[ok])) + 1e-37)
    got = ops.exp(x).numpy()
    want = torch.exp(t(x).double()).numpy()
    check(got, want, 16 * EPS * np.abs(want) + 1e-37)
    x.flat[-1] = np.nan  # clamp keeps a NaN
    for kw in ({"min": 1e-5}, {"max": 0.5}, {"min": -1.0, "max": 2.0}, {"min": 3.0, "max": 1.0}):
        got = ops.clamp(x, **kw).numpy()
        want = torch.clamp(t(x), **kw).numpy()
        np.testing.assert_array_equal(got, want)
    # RMVPE's and XTTS's log-mel: log(clamp(mel, min=1e-5)), on the device end to end
    mel = ops.ctx.tensor(np.abs(rand(rng, *shape)))
    got = ops.log(ops.clamp(mel, min=1e-5)).numpy()
    want = torch.log(torch.clamp(t(mel.numpy()).double(), min=1e-5)).numpy()
    check(got, want, 16 * EPS * (np.abs(want) + 1) + 1e-37)
    with pytest.raises(kcrt.Error, match="At least one of 'min' or 'max'"):
        ops.clamp(x)


def test_elementwise_errors(ops, rng):
    with pytest.raises(kcrt.Error, match="approximate argument must be either none or tanh"):
        ops.gelu(rand(rng, 3), approximate="erf")
    with pytest.raises(kcrt.Error, match="inplace=True"):
        ops.relu(rand(rng, 3), inplace=True)
    assert ops.relu(np.zeros((0, 3), np.float32)).shape == (0, 3)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,left,right", [((1, 1), 0, 0), ((2, 5), 4, 4), ((3, 2, 17), 16, 1), ((1, 1030), 512, 3),
                                              ((2, 3, 7), 0, 6)])
def test_pad(ops, rng, mode, shape, left, right):
    x = rand(rng, *shape)
    if mode == "reflect" and max(left, right) >= shape[-1]:
        with pytest.raises(kcrt.Error, match="Padding size should be less than the corresponding input dimension"):
            ops.pad(x, (left, right), mode)
        return
    kw = {"value": -1.5} if mode == "constant" else {}
    got = ops.pad(x, (left, right), mode, **kw).numpy()
    tx = t(x)[None] if mode == "circular" and len(shape) == 2 else t(x)  # torch 1.13: circular wants 3-D
    want = F.pad(tx, (left, right), mode, **kw).numpy().reshape(got.shape)
    np.testing.assert_array_equal(got, want)  # a copy: exact


def test_pad_more_rows_than_a_grid_holds(ops, rng):
    x = rand(rng, 70001, 3)  # the grid's y takes 65,535 rows: two launches
    got = ops.pad(x, (2, 1), "replicate").numpy()
    np.testing.assert_array_equal(got, F.pad(t(x)[None], (2, 1), "replicate")[0].numpy())


def test_pad_errors(ops, rng):
    x = rand(rng, 2, 5)
    with pytest.raises(kcrt.Error, match="Padding length must be divisible by 2"):
        ops.pad(x, (1,))
    with pytest.raises(kcrt.Error, match="last dimension only"):
        ops.pad(x, (1, 1, 1, 1))
    with pytest.raises(kcrt.Error, match="Only 2D, 3D, 4D, 5D padding with non-constant padding"):
        ops.pad(rand(rng, 5), (1, 1), "reflect")
    with pytest.raises(kcrt.Error, match="doesn't take in value argument"):
        ops.pad(x, (1, 1), "replicate", value=2.0)
    with pytest.raises(kcrt.Error, match="wrapping around more than once"):
        ops.pad(x, (6, 0), "circular")
    assert ops.pad(rand(rng, 4), (2, 3), value=7.0).numpy().tolist()[:2] == [7.0, 7.0]


INTERP = [dict(size=1), dict(size=9), dict(size=3), dict(size=37), dict(scale_factor=480), dict(scale_factor=2.0),
          dict(scale_factor=0.5), dict(scale_factor=1.7), dict(scale_factor=1.7, recompute_scale_factor=True),
          dict(size=(33,))]


@pytest.mark.parametrize("mode,align", [("nearest", None), ("linear", False), ("linear", True)])
@pytest.mark.parametrize("kw", INTERP, ids=[str(k) for k in INTERP])
@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 11), (1, 2, 100)])
def test_interpolate(ops, rng, mode, align, kw, shape):
    x = rand(rng, *shape)
    if "scale_factor" in kw and int(np.floor(shape[2] * kw["scale_factor"])) <= 0:
        with pytest.raises(kcrt.Error, match="sizes should be greater than 0"):
            ops.interpolate(x, mode=mode, align_corners=align, **kw)
        return
    got = ops.interpolate(x, mode=mode, align_corners=align, **kw).numpy()
    want = F.interpolate(t(x), mode=mode, align_corners=align, **kw).numpy()
    assert got.shape == want.shape
    if mode == "nearest":
        np.testing.assert_array_equal(got, want)  # the same sample, picked in float as torch does
    else:  # a blend of two samples: a few roundings of their size, and the position's
        # rounding (a float below t_in, which torch may compute with an FMA where kc does
        # not: one ulp of it, <= t_in eps, moves the blend by |x_j - x_i| <= 2 max|x| times that)
        big = np.broadcast_to(np.abs(x).max(axis=2, keepdims=True), want.shape)
        check(got, want, 8 * EPS * 2 * big + 2 * big * 2 * shape[2] * EPS + 1e-37)


def test_interpolate_errors(ops, rng):
    x = rand(rng, 1, 2, 5)
    with pytest.raises(kcrt.Error, match="either size or scale_factor should be defined"):
        ops.interpolate(x)
    with pytest.raises(kcrt.Error, match="only one of size or scale_factor should be defined"):
        ops.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(kcrt.Error, match="align_corners option can only be set with the interpolating modes"):
        ops.interpolate(x, size=3, align_corners=True)
    with pytest.raises(kcrt.Error, match="Only 3D input"):
        ops.interpolate(rand(rng, 2, 5), size=3)
    with pytest.raises(kcrt.Error, match="does nearest and linear"):
        ops.interpolate(x, size=3, mode="bicubic")


def test_results_stay_on_the_device(ops, rng):
    x, w = rand(rng, 8, 64), rand(rng, 8, 8, 3)
    h = ops.conv1d(x, w, padding=1)
    assert isinstance(h, kcrt.Tensor)
    y = ops.conv1d(h, w, padding=1)  # a Tensor in: no round trip
    want = F.conv1d(F.conv1d(t(x)[None], t(w), padding=1), t(w), padding=1)[0].numpy()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-4, atol=1e-4)
    z = ops.softmax(ops.layer_norm(ops.linear(y, rand(rng, 5, 64)), 5))
    assert z.shape == (8, 5)
    np.testing.assert_allclose(z.numpy().sum(-1), 1, rtol=1e-5)


def test_torch_words_for_wrong_calls(ops, rng):
    x, w = rand(rng, 4, 20), rand(rng, 6, 3, 3)
    with pytest.raises(kcrt.Error, match=r"expected input\[4, 20\] to have 3 channels, but got 4"):
        ops.conv1d(x, w)
    with pytest.raises(kcrt.Error, match="expected 2 or 3-D input for 'input'"):
        ops.conv1d(rand(rng, 20), w)
    with pytest.raises(kcrt.Error, match="expected scalar type Float but found Double"):
        ops.conv1d(x.astype(np.float64), rand(rng, 6, 4, 3))
    with pytest.raises(kcrt.Error, match="Output size is too small"):
        ops.conv1d(rand(rng, 4, 2), rand(rng, 6, 4, 5))
    with pytest.raises(kcrt.Error, match=r"expected bias of size \[6\]"):
        ops.conv1d(x, rand(rng, 6, 4, 3), rand(rng, 5))
    with pytest.raises(kcrt.Error, match="Given groups=3, weight of size"):
        ops.conv1d(x, rand(rng, 6, 2, 3), groups=3)
    with pytest.raises(kcrt.Error, match="stride must be a positive integer"):
        ops.conv1d(x, rand(rng, 6, 4, 3), stride=0)
    with pytest.raises(kcrt.Error, match=r"mat1 and mat2 shapes cannot be multiplied \(4x20 and 19x3\)"):
        ops.linear(x, rand(rng, 3, 19))
    with pytest.raises(kcrt.Error, match=r"Given normalized_shape=\[7\], expected input with shape \[\*, 7\]"):
        ops.layer_norm(x, 7)
    with pytest.raises(kcrt.Error, match="Dimension out of range"):
        ops.softmax(x, dim=2)
    with pytest.raises(kcrt.Error, match="along the last dimension only"):
        ops.softmax(x, dim=0)
    with pytest.raises(kcrt.Error, match="output padding must be smaller"):
        ops.conv_transpose1d(x, rand(rng, 4, 2, 3), stride=2, output_padding=2)


def test_module_level_functions(ops, monkeypatch, rng, tmp_path):
    monkeypatch.setenv("KCRT_BUNDLE", BUNDLE)
    kcrt.nn._ops = None
    x = rand(rng, 3, 9)
    np.testing.assert_allclose(kcrt.nn.softmax(x, dim=-1).numpy(), F.softmax(t(x), -1).numpy(), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(kcrt.nn.relu(x).numpy(), F.relu(t(x)).numpy())
    monkeypatch.setenv("KCRT_BUNDLE", str(tmp_path / "none.kcb"))
    kcrt.nn._ops = None
    with pytest.raises(kcrt.Error, match="no bundle: set KCRT_BUNDLE"):
        kcrt.nn.softmax(x)
    kcrt.nn._ops = None


def exact_tensor(ops, a):
    """a in a buffer of exactly its bytes, as a wrapped DLPack tensor's
    (kcrt.from_dlpack on CUDA or HIP) is: not rounded up to 16 bytes."""
    buf = ops.ctx.buffer(a.nbytes)
    buf.write(np.ascontiguousarray(a))
    return kcrt.Tensor(buf, a.shape, a.dtype)


def test_exact_size_tensors_reach_the_vector_views(ops, rng):
    # 3 x 7 floats: 84 bytes, where the float4 views of linear, softmax and layernorm read 96
    x, w, b = rand(rng, 3, 7), rand(rng, 5, 7), rand(rng, 5)
    kx, kw = exact_tensor(ops, x), exact_tensor(ops, w)
    mag = np.abs(x) @ np.abs(w).T + np.abs(b)
    check(ops.linear(kx, kw, exact_tensor(ops, b)).numpy(), x @ w.T + b, 4 * 8 * EPS * mag + 1e-30)
    check(ops.linear(exact_tensor(ops, x[:1, :]), kw).numpy(), x[:1] @ w.T, 4 * 8 * EPS * mag[:1] + 1e-30)  # gemv
    check(ops.softmax(kx, -1).numpy(), F.softmax(t(x), -1).numpy(), np.full(x.shape, 1e-6))
    check(ops.layer_norm(kx, 7).numpy(), F.layer_norm(t(x), (7,)).numpy(), 1e-5 + centring(x, 1, None, 1e-5))
    xc, wc = rand(rng, 3, 11), rand(rng, 2, 3, 3)  # 33 and 18 floats
    want = F.conv1d(t(xc[None]), t(wc))[0].numpy()
    got = ops.conv1d(exact_tensor(ops, xc), exact_tensor(ops, wc)).numpy()
    check(got, want, 2 * 10 * EPS * (F.conv1d(t(np.abs(xc)[None]), t(np.abs(wc)))[0].numpy()) + 1e-30)
    # the inputs themselves are left as they were
    np.testing.assert_array_equal(kx.numpy(), x)
    np.testing.assert_array_equal(kw.numpy(), w)
    # float16: 21 halves, where linear_f16's half4 views read 24
    xh, wh = x.astype(np.float16), w.astype(np.float16)
    try:
        got = ops.linear(exact_tensor(ops, xh), exact_tensor(ops, wh)).numpy()
    except kcrt.Error as e:
        if "16-bit storage" in str(e):
            return
        raise
    want = (xh.astype(np.float64) @ wh.astype(np.float64).T)
    check(got.astype(np.float64), want, np.abs(want) * 2.0 ** -10 + 8 * 8 * EPS * mag + 2.0 ** -24)
