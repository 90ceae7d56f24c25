"""kcrt.Tensor and DLPack on the device of the tests (lavapipe in CI):
tensors made from numpy, passed to kernels, read back; from_dlpack of
host tensors (a copy) and refusals of device tensors it cannot reach;
exports (a host copy on Vulkan) that numpy (and PyTorch, when installed)
take. test_dlpack_fake.py has the zero-copy side, on the fake CUDA and
HIP drivers."""
import gc
import os

import numpy as np
import pytest

import kcrt
from kcrt import _dlpack

BUNDLE = os.environ.get("KCRT_TEST_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_BUNDLE is not set")


@pytest.fixture(scope="module")
def ctx():
    try:
        c = kcrt.open()
    except kcrt.Error as e:
        pytest.skip("no device: %s" % e)
    yield c
    c.close()


@pytest.fixture
def rng():
    return np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


class Producer:
    """A DLPack producer that is not numpy: a host array it claims is on
    `device` (what a framework on another device would hand over)."""

    def __init__(self, array, device=(_dlpack.CPU, 0)):
        self.array, self.device = array, device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        return _dlpack.export(self, self.array.ctypes.data, self.device, self.array.shape, self.array.dtype)


def test_tensor_from_numpy(ctx, rng):
    a = rng.standard_normal((3, 5, 7)).astype(np.float32)
    t = ctx.tensor(a)
    assert t.shape == (3, 5, 7) and t.dtype == np.float32 and t.size == 105 and t.nbytes == 420
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(np.asarray(t), a)
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), a.astype(np.float64))
    assert "float32 (3, 5, 7)" in repr(t)
    b = ctx.tensor(rng.integers(0, 2, 9).astype(np.bool_))
    assert b.numpy().dtype == np.bool_


def test_kernels_take_tensors(ctx, rng):
    k = ctx.load(BUNDLE).kernel("saxpy")
    n = 3001
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    tx, ty = ctx.tensor(x), ctx.tensor(y)
    k(n, 2.0, tx, ty)  # device-resident: nothing copied back into y
    np.testing.assert_allclose(ty.numpy(), 2.0 * x + y, rtol=1e-6)
    k.launch(n, -2.0, tx, ty)
    ctx.finish()
    np.testing.assert_allclose(ty.numpy(), y, rtol=1e-5, atol=1e-6)
    with pytest.raises(kcrt.Error, match="'x' is a buffer of float .numpy float32., not a tensor of float64"):
        k(n, 1.0, ctx.tensor(x.astype(np.float64)), ty)


def test_from_dlpack_copies_host_tensors(ctx, rng):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    t = kcrt.from_dlpack(a, ctx)
    np.testing.assert_array_equal(t.numpy(), a)
    p = Producer(a.copy())
    t2 = kcrt.from_dlpack(p, ctx)
    p.array[:] = 0  # a copy: the tensor keeps what it had
    np.testing.assert_array_equal(t2.numpy(), a)
    assert kcrt.from_dlpack(t2, ctx) is t2
    with pytest.raises(kcrt.Error, match="speaks no DLPack"):
        kcrt.from_dlpack([1, 2, 3], ctx)


def test_from_dlpack_refuses_a_device_it_cannot_reach(ctx):
    if ctx.backend != "vulkan":
        pytest.skip("on %s: test_dlpack_fake.py" % ctx.backend)
    with pytest.raises(kcrt.Error, match="on cuda device 0; this context is on vulkan"):
        kcrt.from_dlpack(Producer(np.zeros(4, np.float32), (_dlpack.CUDA, 0)), ctx)


def test_exports_reach_numpy(ctx, rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    t = ctx.tensor(a)
    if ctx.backend == "vulkan":
        assert t.__dlpack_device__() == (_dlpack.CPU, 0)
        np.testing.assert_array_equal(np.from_dlpack(t), a)
        buf = ctx.buffer(8)
        buf.write(np.array([1, 2], np.float32))
        np.testing.assert_array_equal(np.from_dlpack(buf).view(np.float32), [1, 2])


def test_unconsumed_capsules_are_released(ctx):
    t = ctx.tensor(np.ones(10, np.float32))
    before = len(_dlpack._exports)
    for _ in range(50):
        cap = t.__dlpack__()
        del cap
    gc.collect()
    assert len(_dlpack._exports) == before
    taken = _dlpack.Taken(t.__dlpack__())
    assert len(_dlpack._exports) == before + 1
    assert taken.shape == (10,) and taken.dtype == np.float32 and taken.compact
    taken.release()
    assert len(_dlpack._exports) == before
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        cap = t.__dlpack__()
        _dlpack.Taken(cap)
        _dlpack.Taken(cap)  # consumed already


def test_torch_round_trip(ctx, rng):
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(rng.standard_normal((5, 4)).astype(np.float32))
    t = kcrt.from_dlpack(a, ctx)  # a CPU tensor: copied to the device
    np.testing.assert_array_equal(t.numpy(), a.numpy())
    back = torch.from_dlpack(t)
    assert back.shape == (5, 4) and back.dtype == torch.float32
    # through CUDA the export is the device memory itself (back is on
    # cuda:0), elsewhere a host copy
    assert torch.equal(back.cpu(), a)
    h = kcrt.from_dlpack(torch.arange(6, dtype=torch.float16), ctx)
    assert h.dtype == np.float16 and list(h.numpy()) == [0, 1, 2, 3, 4, 5]
