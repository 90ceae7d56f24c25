"""kcrt.nn.gru against torch.nn.GRU (float64 copies of the same weights):
one direction and RMVPE's bidirectional layer (two calls, concatenated),
batch first and not, unbatched, an initial state, hidden sizes that are
and are not multiples of 4. Bound: each gate's argument is a dot product
of H (or I) terms off by gamma of their magnitudes; sigmoid and tanh pass
that on at most, h' mixes with weights in [0, 1], and the error of h
carries to the next step (at most times (1 + |W_hh| |h|'s slope): the
bound grows with the step, 8 (t + 1) gamma(H + I + 8) (1 + sum |W| |h|)."""
import os

import numpy as np
import pytest

import kcrt
import kcrt.nn

torch = pytest.importorskip("torch")
BUNDLE = os.environ.get("KCRT_TEST_RVC_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_RVC_BUNDLE is not set")
U = float(np.finfo(np.float32).eps) / 2


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def params(m, suffix):
    return [getattr(m, name + suffix).detach().float().numpy() for name in ("weight_ih", "weight_hh", "bias_ih",
                                                                            "bias_hh")]


@pytest.mark.parametrize("steps,batch,isz,hid,bidir,batch_first", [
    (1, 1, 1, 1, False, False), (7, 2, 5, 6, False, True), (50, 1, 384, 256, True, True),  # RMVPE's BiGRU
    (13, 3, 9, 13, True, False), (5, None, 4, 8, False, False)])
def test_gru(ops, rng, steps, batch, isz, hid, bidir, batch_first):
    m = torch.nn.GRU(isz, hid, batch_first=batch_first, bidirectional=bidir)
    shape = (steps, isz) if batch is None else ((batch, steps, isz) if batch_first else (steps, batch, isz))
    x = rng.standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want, want_h = m.double()(torch.from_numpy(x).double())
    m = m.float()
    outs, hs = [], []
    for d, suffix in enumerate(["_l0"] + (["_l0_reverse"] if bidir else [])):
        wih, whh, bih, bhh = params(m, suffix)
        o, h = ops.gru(x, wih, whh, bih, bhh, batch_first=batch_first, reverse=d == 1)
        outs.append(o.numpy())
        hs.append(h.numpy())
    got = np.concatenate(outs, axis=-1)
    assert got.shape == tuple(want.shape)
    t_axis = 1 if (batch_first and batch is not None) else 0
    t = np.arange(steps).reshape([-1 if a == t_axis else 1 for a in range(got.ndim)])
    if bidir:  # the reverse direction's step count runs the other way
        t = np.concatenate([np.broadcast_to(t, got[..., :hid].shape),
                            np.broadcast_to(steps - 1 - t, got[..., hid:].shape)], axis=-1)
    scale = 1 + np.abs(m.weight_hh_l0.detach().numpy()).sum(1).max() + np.abs(x).max() * np.abs(
        m.weight_ih_l0.detach().numpy()).sum(1).max()
    bound = 8 * (t + 1) * (hid + isz + 8) * U * scale
    err = np.abs(got - want.numpy())
    assert np.all(err <= bound), (err.max(), bound.max())
    assert np.allclose(np.stack(hs), want_h.numpy().reshape(np.stack(hs).shape), atol=float(bound.max()), rtol=0)


def test_gru_initial_state_and_errors(ops, rng):
    m = torch.nn.GRU(3, 4)
    x = rng.standard_normal((6, 2, 3)).astype(np.float32)
    h0 = rng.standard_normal((1, 2, 4)).astype(np.float32)
    with torch.no_grad():
        want, _ = m.double()(torch.from_numpy(x).double(), torch.from_numpy(h0).double())
    wih, whh, bih, bhh = params(m.float(), "_l0")
    got, _ = ops.gru(x, wih, whh, bih, bhh, hx=h0)
    assert np.abs(got.numpy() - want.numpy()).max() < 1e-5
    with pytest.raises(kcrt.Error, match="do not make a GRU"):
        ops.gru(x, whh, whh)
    with pytest.raises(kcrt.Error, match="Expected hidden size"):
        ops.gru(x, wih, whh, hx=np.zeros((1, 3, 4), np.float32))
