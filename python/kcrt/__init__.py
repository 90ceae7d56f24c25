"""kcrt — kc's runtime from Python: load a bundle, launch its tuned kernels.

    import kcrt, numpy as np
    ctx = kcrt.open()                      # the best device; KCRT_BACKEND/KCRT_DEVICE override
    b = ctx.load("rvc.kcb")
    saxpy = b.kernel("saxpy")
    y = np.ones(n, np.float32)
    saxpy(n, 2.0, x, y)                    # arrays uploaded, y filled back: synchronous

The API is DESIGN.md §10's; docs/python.md says all of it. Every failure is
a kcrt.Error (a RuntimeError) whose message is libkcrt's (kcrt_error) or
names the parameter that is wrong.
"""
import math

import numpy as np

from . import _dlpack, _lib
from ._lib import lib as _c

__all__ = ["nn", "Error", "open", "Context", "Bundle", "Kernel", "Buffer", "Tensor", "from_dlpack", "default_context",
           "library_path"]
__version__ = "0.1.0"

library_path = _lib.path  # the libkcrt this process loaded

# kcrt_type -> (numpy dtype of one element's scalars, lanes), in kc/kcrt.h's KCRT_TYPES order
_ELEMENT = {
    "bool": (np.uint32, 1), "int": (np.int32, 1), "uint": (np.uint32, 1), "float": (np.float32, 1),
    "half": (np.float16, 1), "long": (np.int64, 1), "ulong": (np.uint64, 1), "float2": (np.float32, 2),
    "float4": (np.float32, 4), "half2": (np.float16, 2), "half4": (np.float16, 4), "int2": (np.int32, 2),
    "int4": (np.int32, 4), "uint2": (np.uint32, 2), "uint4": (np.uint32, 4),
}


class Error(RuntimeError):
    """A libkcrt failure (message: kcrt_error) or a wrong call; .status is
    the kcrt_status name ("KCRT_ERROR_BAD_ARGUMENT"), or None for a call
    refused before it reached libkcrt."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def _check(status, ctx_ptr):
    if status != 0:
        name = _lib.STATUS_NAMES[status] if 0 <= status < len(_lib.STATUS_NAMES) else "status %d" % status
        raise Error((_c.kcrt_error(ctx_ptr) or b"").decode(errors="replace") or name, name)


def _text(b):
    return b.decode() if b is not None else None


def open(backend=None, device=None):
    """A context on one device, as kcrt_open: backend None (auto), "vulkan",
    "hip" or "cuda"; device None (the best) or an index (kc devices)."""
    return Context(backend, device)


class Context:
    """One device. Closing it (close(), a with block, or garbage collection)
    frees every bundle and buffer made from it."""

    def __init__(self, backend=None, device=None):
        if backend is not None and not isinstance(backend, str):
            raise Error("kcrt.open: backend must be a str or None, not %s" % type(backend).__name__)
        if device is not None and (not isinstance(device, int) or isinstance(device, bool) or device < 0):
            raise Error("kcrt.open: device must be an index >= 0 or None, not %r" % (device,))
        opts = _lib.Options(backend.encode() if backend else None, -1 if device is None else device)
        ptr = _lib.P()
        status = _c.kcrt_open(_lib.ctypes.byref(ptr), _lib.ctypes.byref(opts))
        self._ptr = ptr.value
        if status != 0:
            try:
                _check(status, self._ptr)
            finally:
                self.close()
        self.device_name = _text(_c.kcrt_device_name(self._ptr))
        self.backend = _text(_c.kcrt_backend_name(self._ptr))

    def _live(self):
        if not self._ptr:
            raise Error("the context is closed")
        return self._ptr

    def close(self):
        if getattr(self, "_ptr", None):
            _c.kcrt_close(self._ptr)
            self._ptr = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<kcrt.Context %s on %s>" % (self.device_name, self.backend) if self._ptr else "<kcrt.Context closed>"

    def load(self, path):
        """The bundle at path (a kcrt.Bundle)."""
        return Bundle(self, path)

    def buffer(self, nbytes):
        """A device buffer of nbytes bytes, holding zeros (a kcrt.Buffer)."""
        return Buffer(self, nbytes)

    def tensor(self, array):
        """A copy of a numpy array (or anything np.asarray takes) on this device."""
        a = np.ascontiguousarray(array)
        buf = Buffer(self, max(16, (a.nbytes + 15) // 16 * 16))  # whole 16 bytes: kernels may read float4s
        if a.nbytes:
            buf._write_raw(a)
        return Tensor(buf, a.shape, a.dtype)

    def wrap(self, pointer, nbytes):
        """A Buffer over device memory the caller owns (kcrt_buffer_wrap): a
        device pointer on HIP and CUDA. Nothing is copied; the memory must
        outlive the Buffer and its launches."""
        ptr = _lib.P()
        _check(_c.kcrt_buffer_wrap(self._live(), _lib.P(pointer), int(nbytes), _lib.ctypes.byref(ptr)), self._ptr)
        return Buffer(self, int(nbytes), _handle=ptr.value)

    def set_stream(self, stream):
        """Launches and transfers go on the caller's HIP or CUDA stream (an
        address, e.g. torch.cuda.current_stream().cuda_stream); None: the
        context's own again."""
        _check(_c.kcrt_set_stream(self._live(), _lib.P(stream or None)), self._ptr)

    def _ordinal(self):
        """The device's number in its backend's API (for DLPack)."""
        if getattr(self, "_ord", None) is None:
            self._ord = Buffer(self, 4)._native()[1]
        return self._ord

    def finish(self):
        """Waits for every launch of this context."""
        _check(_c.kcrt_finish(self._live()), self._ptr)

    def stats(self):
        """What libkcrt has done and holds (kcrt_internal.h's kcrt_stats) as
        a dict: launches, submissions, pipelines_created, buffers_live, …"""
        st = _lib.Stats()
        _c.kcrt_stats_get(self._live(), _lib.ctypes.byref(st))
        return {name: getattr(st, name) for name, _ in _lib.Stats._fields_}


class Bundle:
    """A loaded bundle; .kernels lists its kernels' names."""

    def __init__(self, ctx, path):
        self.ctx = ctx
        ptr = _lib.P()
        _check(_c.kcrt_bundle_load(ctx._live(), str(path).encode(), _lib.ctypes.byref(ptr)), ctx._ptr)
        self._ptr = ptr.value
        self.path = str(path)
        self.kernels = [_text(_c.kcrt_bundle_kernel_info(self._ptr, i).contents.name)
                        for i in range(_c.kcrt_bundle_kernel_count(self._ptr))]

    def kernel(self, name, variant=None):
        """Kernel name: choosing its variant per launch (tuned for this device
        and shape), or exactly the variant given ("WG=64,TM=2"; "" the default)."""
        return Kernel(self, name, variant)

    def __repr__(self):
        return "<kcrt.Bundle %s: %s>" % (self.path, ", ".join(self.kernels))


class _Param:
    __slots__ = ("name", "kind", "type", "dtype", "lanes", "readonly", "arg_type")

    def __init__(self, info):
        self.name = _text(info.name)
        self.kind = "buffer" if info.kind == _lib.PARAM_BUFFER else "scalar"
        self.type = _text(info.type_name)
        self.dtype, self.lanes = _ELEMENT[self.type]
        self.dtype = np.dtype(self.dtype)
        self.readonly = bool(info.readonly)
        self.arg_type = _lib.ARG_BUF if self.kind == "buffer" else {
            "int": _lib.ARG_I32, "uint": _lib.ARG_U32, "float": _lib.ARG_F32, "half": _lib.ARG_F16,
            "bool": _lib.ARG_BOOL}[self.type]


class Kernel:
    """One kernel of a bundle. k(...) runs it synchronously with numpy
    arrays or Buffers; k.launch(...) queues it with Buffers only;
    k.choice(...) says which variant a launch would use and why."""

    def __init__(self, bundle, name, variant=None):
        self.bundle = bundle
        self.ctx = bundle.ctx
        ptr = _lib.P()
        if variant is None:
            status = _c.kcrt_kernel_get(bundle._ptr, str(name).encode(), _lib.ctypes.byref(ptr))
        else:
            status = _c.kcrt_kernel_get_variant(bundle._ptr, str(name).encode(), str(variant).encode(),
                                                _lib.ctypes.byref(ptr))
        _check(status, self.ctx._ptr)
        self._ptr = ptr.value
        self.name = str(name)
        info = _c.kcrt_kernel_info_get(self._ptr).contents
        self._params = [_Param(info.params[i]) for i in range(info.nparams)]
        self.params = [(p.name, p.kind, p.type) for p in self._params]
        self._args = (_lib.Arg * max(1, len(self._params)))()
        for a, p in zip(self._args, self._params):
            a.type = p.arg_type

    def __repr__(self):
        return "<kcrt.Kernel %s(%s)>" % (self.name, ", ".join("%s %s" % (t, n) for n, _, t in self.params))

    def _count(self, args, how):
        if len(args) != len(self._params):
            raise Error("%s: %s takes %d arguments (%s), not %d" % (
                self.name, how, len(self._params), ", ".join(p.name for p in self._params), len(args)))

    def _scalar(self, slot, p, value):
        """Sets one scalar argument from a Python or numpy number."""
        try:
            if p.type == "bool":
                if not isinstance(value, (bool, np.bool_, int, np.integer)):
                    raise TypeError
                slot.v.b = bool(value)
            elif p.type in ("int", "uint"):
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                    raise TypeError
                v = int(value)
                lo, hi = (-2**31, 2**31 - 1) if p.type == "int" else (0, 2**32 - 1)
                if not lo <= v <= hi:
                    raise Error("%s: scalar '%s' (%s) cannot hold %d" % (self.name, p.name, p.type, v))
                if p.type == "int":
                    slot.v.i32 = v
                else:
                    slot.v.u32 = v
            else:
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                    raise TypeError
                if p.type == "float":
                    slot.v.f32 = float(value)
                else:
                    slot.v.f16 = _c.kcrt_f32_to_f16(float(value))
        except TypeError:
            raise Error("%s: scalar '%s' is %s; %s is not one" % (
                self.name, p.name, p.type, type(value).__name__)) from None

    def _fill(self, args, arrays_ok):
        """Sets self._args from args; with arrays_ok, numpy arrays become
        temporary buffers: returns [(array, Buffer, fill back)]."""
        temps = []
        try:
            for slot, p, a in zip(self._args, self._params, args):
                if p.kind == "scalar":
                    if isinstance(a, (Buffer, Tensor, np.ndarray)):
                        raise Error("%s: '%s' is a %s scalar, not a buffer" % (self.name, p.name, p.type))
                    self._scalar(slot, p, a)
                    continue
                if isinstance(a, Tensor):  # its bytes are used as they are: the dtype must be the element's
                    if a.dtype != p.dtype:
                        raise Error("%s: '%s' is a buffer of %s (numpy %s), not a tensor of %s" % (
                            self.name, p.name, p.type, p.dtype.name, a.dtype.name))
                    a = a.buffer
                if isinstance(a, Buffer):
                    if a.ctx is not self.ctx:
                        raise Error("%s: buffer for '%s' belongs to another context" % (self.name, p.name))
                    slot.v.buf = a._live()
                elif isinstance(a, np.ndarray) and arrays_ok:
                    buf = self._upload(p, a)
                    temps.append((a, buf, not p.readonly and a.flags.writeable))
                    slot.v.buf = buf._ptr
                elif isinstance(a, np.ndarray):
                    raise Error("%s: launch takes kcrt.Buffer for '%s', not a numpy array (k(...) takes "
                                "arrays and waits)" % (self.name, p.name))
                else:
                    raise Error("%s: '%s' is a buffer of %s; %s is not one" % (
                        self.name, p.name, p.type, type(a).__name__))
        except BaseException:
            for _, buf, _ in temps:
                buf.free()
            raise
        return temps

    def _upload(self, p, a):
        want = p.dtype
        if p.type == "bool" and a.dtype == np.bool_:
            a_dev = a.astype(np.uint32)
        elif a.dtype != want:
            raise Error("%s: '%s' is a buffer of %s (numpy %s), not %s" % (
                self.name, p.name, p.type, want.name, a.dtype.name))
        else:
            a_dev = np.ascontiguousarray(a)
        if p.lanes > 1 and a_dev.size % p.lanes:
            raise Error("%s: '%s' holds %s, %d values each; %d values are not whole elements" % (
                self.name, p.name, p.type, p.lanes, a_dev.size))
        buf = Buffer(self.ctx, max(a_dev.nbytes, 1))
        if a_dev.nbytes:
            buf._write_raw(a_dev)
        return buf

    def __call__(self, *args):
        """Runs the kernel and waits: numpy arrays are uploaded, and those the
        kernel may write (not const, writeable) are filled back."""
        self._count(args, "a call")
        temps = self._fill(args, True)
        try:
            temps += [(None, buf, False) for buf in self._pad_views(args)]
            _check(_c.kcrt_launch(self._ptr, self._args, len(self._params)), self.ctx._ptr)
            self.ctx.finish()
            for a, buf, back in temps:
                if back and a.nbytes:
                    if a.dtype == np.bool_:
                        out = np.empty(a.shape, np.uint32)
                        buf._read_raw(out)
                        a[...] = out != 0
                    elif a.flags.c_contiguous:
                        buf._read_raw(a)
                    else:
                        out = np.empty(a.shape, a.dtype)
                        buf._read_raw(out)
                        a[...] = out
        finally:
            for _, buf, _ in temps:
                buf.free()

    def launch(self, *args):
        """Queues one launch with Buffers (asynchronous: ctx.finish() waits)."""
        self._count(args, "a launch")
        self._fill(args, False)
        padded = self._pad_views(args)
        try:
            _check(_c.kcrt_launch(self._ptr, self._args, len(self._params)), self.ctx._ptr)
        finally:
            for buf in padded:
                buf.free()  # no wait: libkcrt keeps the memory for the launch (docs/runtime.md, "Spares")

    def _pad_views(self, args):
        """A const vector view (float4 x[kc_cdiv(n, 4)]) reads whole elements,
        so its buffer must be rounded up to one (docs/kernels.md, "Buffers").
        kcrt's own tensors are; a wrapped one (kcrt.from_dlpack on CUDA or
        HIP, ctx.wrap) holds exactly its bytes. Such a buffer goes to the
        launch as a copy rounded up to whole elements, made on the device
        (Buffer.copy_from) and freed after the launch is queued (libkcrt
        keeps its memory from the next buffer until the launch is done).
        Writable views are left to the runtime's size check: a copy would
        lose what the kernel writes."""
        padded = []
        try:
            for i, (p, a) in enumerate(zip(self._params, args)):
                if p.kind == "scalar" or p.lanes == 1 or not p.readonly:
                    continue
                buf = a.buffer if isinstance(a, Tensor) else a
                elem = p.lanes * p.dtype.itemsize
                if not isinstance(buf, Buffer) or buf.nbytes % elem == 0:
                    continue
                copy = Buffer(self.ctx, (buf.nbytes + elem - 1) // elem * elem)
                padded.append(copy)
                copy.copy_from(buf, buf.nbytes)
                self._args[i].v.buf = copy._ptr
        except BaseException:
            for buf in padded:
                buf.free()
            raise
        return padded

    def choice(self, *args):
        """(variant, reason) a launch with these arguments would use."""
        self._count(args, "a choice")
        temps = self._fill(args, True)
        try:
            variant, why = _lib.ctypes.c_char_p(), _lib.ctypes.c_char_p()
            _check(_c.kcrt_kernel_choose(self._ptr, self._args, len(self._params), _lib.ctypes.byref(variant),
                                         _lib.ctypes.byref(why)), self.ctx._ptr)
            return _text(variant.value), _text(why.value)
        finally:
            for _, buf, _ in temps:
                buf.free()


class Buffer:
    """Device memory of a context. write(array) uploads at an offset;
    read(dtype, count) downloads; free() (or garbage collection) frees it."""

    def __init__(self, ctx, nbytes, _handle=None):
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes <= 0:
            raise Error("kcrt.Buffer: nbytes must be a whole number > 0, not %r" % (nbytes,))
        self.ctx = ctx
        if _handle is None:
            ptr = _lib.P()
            _check(_c.kcrt_buffer_create(ctx._live(), int(nbytes), _lib.ctypes.byref(ptr)), ctx._ptr)
            _handle = ptr.value
        self._ptr = _handle
        self.nbytes = int(nbytes)

    def _native(self):
        """(device pointer or VkBuffer, the device's number in its API)."""
        ptr, dev = _lib.P(), _lib.ctypes.c_int()
        _check(_c.kcrt_buffer_native(self._live(), _lib.ctypes.byref(ptr), _lib.ctypes.byref(dev)), self.ctx._ptr)
        return ptr.value or 0, dev.value

    def __dlpack_device__(self):
        return Tensor(self, (self.nbytes,), np.uint8).__dlpack_device__()

    def __dlpack__(self, stream=None):
        """The buffer as a 1-D uint8 DLPack tensor (see Tensor.__dlpack__)."""
        return Tensor(self, (self.nbytes,), np.uint8).__dlpack__(stream=stream)

    def _live(self):
        if not self._ptr or not self.ctx._ptr:
            raise Error("the buffer is freed" if not self._ptr else "the buffer's context is closed")
        return self._ptr

    def free(self):
        if getattr(self, "_ptr", None) and self.ctx._ptr:
            _c.kcrt_buffer_free(self._ptr)
        self._ptr = None

    def __del__(self):
        self.free()

    def __repr__(self):
        return "<kcrt.Buffer %d bytes%s>" % (self.nbytes, "" if self._ptr else ", freed")

    def _write_raw(self, a, offset=0):
        _check(_c.kcrt_buffer_write(self._live(), offset, a.ctypes.data, a.nbytes), self.ctx._ptr)

    def _read_raw(self, a, offset=0):
        _check(_c.kcrt_buffer_read(self._live(), offset, a.ctypes.data, a.nbytes), self.ctx._ptr)

    def copy_from(self, src, nbytes=None, offset=0, src_offset=0):
        """Copies nbytes of src (a Buffer of the same context; all from
        src_offset when None) to byte offset of this one, on the device:
        queued in order with the launches (kcrt_buffer_copy), without a wait
        or a trip through the host."""
        if not isinstance(src, Buffer):
            raise Error("kcrt.Buffer.copy_from: src must be a kcrt.Buffer, not %s" % type(src).__name__)
        n = src.nbytes - src_offset if nbytes is None else nbytes
        for name, v in (("nbytes", n), ("offset", offset), ("src_offset", src_offset)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise Error("kcrt.Buffer.copy_from: %s must be a whole number >= 0, not %r" % (name, v))
        _check(_c.kcrt_buffer_copy(self._live(), int(offset), src._live(), int(src_offset), int(n)), self.ctx._ptr)

    def write(self, array, offset=0):
        """Uploads a numpy array (any dtype, its bytes) at byte offset."""
        a = np.ascontiguousarray(array)
        if offset < 0 or offset + a.nbytes > self.nbytes:
            raise Error("kcrt.Buffer.write: %d bytes at offset %d do not fit in %d" % (a.nbytes, offset, self.nbytes))
        self._write_raw(a, offset)

    def read(self, dtype=np.float32, count=None, offset=0):
        """count elements of dtype from byte offset (all that fit when None)."""
        dt = np.dtype(dtype)
        if count is None:
            count = (self.nbytes - offset) // dt.itemsize
        if offset < 0 or count < 0 or offset + count * dt.itemsize > self.nbytes:
            raise Error("kcrt.Buffer.read: %d x %s at offset %d do not fit in %d bytes" % (
                count, dt.name, offset, self.nbytes))
        out = np.empty(count, dt)
        if count:
            self._read_raw(out, offset)
        return out


class Tensor:
    """An array on the device: a Buffer with a shape and a numpy dtype.
    Kernels take it where they take a Buffer; .numpy() (or np.asarray)
    copies it to the host; it speaks DLPack."""

    def __init__(self, buffer, shape, dtype, _taken=None):
        self.buffer = buffer
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self._taken = _taken  # a producer's tensor this one wraps: released when this goes

    @property
    def ctx(self):
        return self.buffer.ctx

    @property
    def size(self):
        return math.prod(self.shape) if self.shape else 1

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def __repr__(self):
        return "<kcrt.Tensor %s %s on %s>" % (self.dtype.name, self.shape, self.ctx.backend)

    def numpy(self):
        """A host copy, as a numpy array."""
        if self.dtype == np.bool_:
            return self.buffer.read(np.uint8, self.size).astype(np.bool_).reshape(self.shape)
        return self.buffer.read(self.dtype, self.size).reshape(self.shape)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __dlpack_device__(self):
        """(kDLCUDA or kDLROCM, ordinal) on CUDA and HIP; (kDLCPU, 0) on Vulkan,
        whose memory no other framework can address: the export is a host copy."""
        kind = _dlpack.BACKEND_DEVICE[self.ctx.backend]
        if kind == _dlpack.VULKAN:
            return (_dlpack.CPU, 0)
        return (kind, self.ctx._ordinal())

    def __dlpack__(self, stream=None):
        """A DLPack capsule: the tensor itself on CUDA and HIP (after the
        context's launches finish), a host copy on Vulkan."""
        if self.ctx.backend == "vulkan":
            a = self.numpy()
            return _dlpack.export(a, a.ctypes.data, (_dlpack.CPU, 0), a.shape, a.dtype)
        self.ctx.finish()  # the consumer's stream may not wait for ours
        ptr, dev = self.buffer._native()
        kind = _dlpack.BACKEND_DEVICE[self.ctx.backend]
        return _dlpack.export(self, ptr, (kind, dev), self.shape, self.dtype)

    def release(self):
        """Frees the device memory now (or lets go of the producer's)."""
        self.buffer.free()
        if self._taken:
            self._taken.release()
            self._taken = None

    def __del__(self):
        if getattr(self, "_taken", None):
            self.buffer.free()  # before the memory it wraps goes back to its producer
            self._taken.release()


_default = None


def default_context():
    """The context module-level calls use: kcrt.open() on first use."""
    global _default
    if _default is None or not _default._ptr:
        _default = open()
    return _default


def from_dlpack(obj, ctx=None):
    """A kcrt.Tensor of a DLPack tensor (a torch tensor, a numpy array, …):
    wrapped without a copy when it lives on this context's device (CUDA or
    HIP, same ordinal), copied through the host when it is on the CPU."""
    ctx = ctx or default_context()
    if isinstance(obj, Tensor) and obj.ctx is ctx:
        return obj
    if isinstance(obj, np.ndarray):
        return ctx.tensor(obj)
    if not hasattr(obj, "__dlpack__"):
        raise Error("kcrt.from_dlpack: %s speaks no DLPack (no __dlpack__)" % type(obj).__name__)
    dev = tuple(obj.__dlpack_device__()) if hasattr(obj, "__dlpack_device__") else (_dlpack.CPU, 0)
    mine = _dlpack.BACKEND_DEVICE[ctx.backend]
    if dev[0] == mine and mine != _dlpack.VULKAN and dev[1] == ctx._ordinal():
        return _wrap_taken(ctx, _dlpack.Taken(obj.__dlpack__()))
    if dev[0] in (_dlpack.CPU, _dlpack.CUDA_HOST):
        return ctx.tensor(np.from_dlpack(obj))
    raise Error("kcrt.from_dlpack: the tensor is on %s device %d; this context is on %s ('%s'): copy it to "
                "the CPU first (tensor.cpu())" % (_dlpack.DEVICE_NAMES.get(dev[0], "type %d" % dev[0]), dev[1],
                                                  ctx.backend, ctx.device_name))


def _wrap_taken(ctx, taken):
    if taken.dtype is None:
        taken.release()
        raise Error("kcrt.from_dlpack: DLPack type %s has no numpy dtype" % taken.dtype_words)
    if not taken.compact:
        taken.release()
        raise Error("kcrt.from_dlpack: the tensor is strided; kcrt wraps contiguous tensors only "
                    "(tensor.contiguous())")
    try:
        buf = ctx.wrap(taken.data, max(taken.nbytes, 1))
    except BaseException:
        taken.release()
        raise
    return Tensor(buf, taken.shape, taken.dtype, _taken=taken)


from . import nn  # noqa: E402  (kcrt.nn builds on what is above)
