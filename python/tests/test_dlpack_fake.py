"""Zero-copy DLPack on the fake CUDA and HIP drivers (tests/runtime/fake_*.c,
whose device memory is host memory, so the test can see it): a producer's
device tensor is wrapped in place (kcrt_buffer_wrap), its deleter runs
when kcrt lets go, and kcrt's tensors export their device pointer.

KCRT_TEST_FAKE_CUDA and KCRT_TEST_FAKE_HIP are the fakes' paths."""
import gc
import os

import numpy as np
import pytest

import kcrt
from kcrt import _dlpack

FAKES = {"cuda": (os.environ.get("KCRT_TEST_FAKE_CUDA"), "KCRT_CUDA_LIBRARY", _dlpack.CUDA),
         "hip": (os.environ.get("KCRT_TEST_FAKE_HIP"), "KCRT_HIP_LIBRARY", _dlpack.ROCM)}


class DeviceProducer:
    """A framework's device tensor: memory of the (fake) device, that is,
    host memory here, with a deleter that says when it ran."""

    def __init__(self, array, device):
        self.array, self.device, self.deleted = array, device, 0

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        return _dlpack.export(_Owner(self), self.array.ctypes.data, self.device, self.array.shape,
                              self.array.dtype)


class _Owner:
    def __init__(self, producer):
        self.producer = producer

    def __del__(self):
        self.producer.deleted += 1


@pytest.fixture(params=sorted(FAKES))
def fake(request, monkeypatch):
    path, env, kind = FAKES[request.param]
    if not path:
        pytest.skip("KCRT_TEST_FAKE_%s is not set" % request.param.upper())
    monkeypatch.setenv(env, path)
    ctx = kcrt.open(backend=request.param)
    yield ctx, kind
    ctx.close()


def test_device_tensors_are_wrapped_in_place(fake):
    ctx, kind = fake
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    p = DeviceProducer(a, (kind, ctx._ordinal()))
    t = kcrt.from_dlpack(p, ctx)
    assert t.shape == (4, 6) and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), a)
    a[1, 2] = 99.0  # the producer writes its memory: kcrt sees it, nothing was copied
    assert t.numpy()[1, 2] == 99.0
    allocations = ctx.stats()["buffers_live"]
    assert p.deleted == 0
    t.release()
    gc.collect()
    assert p.deleted == 1  # the producer's deleter ran once kcrt let go
    assert ctx.stats()["buffers_live"] == allocations - 1


def test_exports_give_the_device_pointer(fake):
    ctx, kind = fake
    a = np.arange(8, dtype=np.int32)
    t = kcrt.from_dlpack(DeviceProducer(a, (kind, ctx._ordinal())), ctx)
    assert t.__dlpack_device__() == (kind, ctx._ordinal())
    taken = _dlpack.Taken(t.__dlpack__())
    assert taken.data == a.ctypes.data and taken.shape == (8,) and taken.dtype == np.int32
    assert taken.device == (kind, ctx._ordinal())
    taken.release()
    own = ctx.tensor(np.ones(3, np.float32))  # kcrt's own memory: its pointer, not a copy
    taken = _dlpack.Taken(own.__dlpack__())
    assert taken.data == own.buffer._native()[0]
    taken.release()


def test_what_cannot_be_wrapped(fake):
    ctx, kind = fake
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(kcrt.Error, match="device 7"):
        kcrt.from_dlpack(DeviceProducer(a, (kind, 7)), ctx)  # another device of the backend

    class Strided(DeviceProducer):
        def __dlpack__(self, stream=None):
            cap = super().__dlpack__()
            m = _dlpack.ctypes.cast(_dlpack._api.PyCapsule_GetPointer(cap, _dlpack.DLTENSOR),
                                    _dlpack.ctypes.POINTER(_dlpack.DLManagedTensor))
            self.strides = (_dlpack.ctypes.c_int64 * 2)(1, 4)  # the transpose
            m.contents.dl_tensor.strides = _dlpack.ctypes.cast(self.strides, _dlpack.ctypes.POINTER(
                _dlpack.ctypes.c_int64))
            return cap

    p = Strided(a, (kind, ctx._ordinal()))
    with pytest.raises(kcrt.Error, match="strided"):
        kcrt.from_dlpack(p, ctx)
    gc.collect()
    assert p.deleted == 1  # refused, and given back


def test_streams(fake):
    ctx, _ = fake
    stream = np.zeros(4, np.uint32)  # any non-NULL handle: the fakes only record it
    ctx.set_stream(stream.ctypes.data)
    ctx.set_stream(None)
