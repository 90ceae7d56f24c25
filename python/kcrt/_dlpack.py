"""_dlpack — the DLPack exchange (dlpack.h, v0.8 ABI) in ctypes: the structs,
taking a producer's "dltensor" capsule, and making one for a consumer.

A consumer (kcrt.from_dlpack) renames the capsule "used_dltensor" and calls
the producer's deleter when it lets go. A producer (Tensor.__dlpack__)
hands out a DLManagedTensor whose deleter drops the reference that kept
the exported object alive; the capsule's own destructor calls that deleter
when nobody consumed it, as the protocol asks.
"""
import ctypes
import math

import numpy as np

# DLDeviceType
CPU, CUDA, CUDA_HOST, OPENCL, VULKAN, METAL, VPI, ROCM = 1, 2, 3, 4, 7, 8, 9, 10
DEVICE_NAMES = {CPU: "cpu", CUDA: "cuda", CUDA_HOST: "cuda_host", OPENCL: "opencl", VULKAN: "vulkan",
                METAL: "metal", VPI: "vpi", ROCM: "rocm"}
BACKEND_DEVICE = {"cuda": CUDA, "hip": ROCM, "vulkan": VULKAN}
# DLDataTypeCode
INT, UINT, FLOAT, BFLOAT, BOOL = 0, 1, 2, 4, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
# the destructor sees a capsule being destroyed: raw pointers, no references
_raw = ctypes.PyDLL(None)
_raw.PyCapsule_IsValid.restype = ctypes.c_int
_raw.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_raw.PyCapsule_GetPointer.restype = ctypes.c_void_p
_raw.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

DLTENSOR, USED = b"dltensor", b"used_dltensor"

_NUMPY_OF = {(FLOAT, 16): np.float16, (FLOAT, 32): np.float32, (FLOAT, 64): np.float64, (INT, 8): np.int8,
             (INT, 16): np.int16, (INT, 32): np.int32, (INT, 64): np.int64, (UINT, 8): np.uint8,
             (UINT, 16): np.uint16, (UINT, 32): np.uint32, (UINT, 64): np.uint64, (BOOL, 8): np.bool_}
_CODE_OF = {np.dtype(v): k for k, v in _NUMPY_OF.items()}


def numpy_dtype(dt):
    """The numpy dtype of a DLDataType, or None when numpy has none."""
    if dt.lanes != 1:
        return None
    t = _NUMPY_OF.get((dt.code, dt.bits))
    return np.dtype(t) if t else None


class Taken:
    """A producer's tensor, taken from its capsule: the fields, and the
    deleter to call once (release())."""

    def __init__(self, capsule):
        self._managed = None
        if not _api.PyCapsule_IsValid(capsule, DLTENSOR):
            raise ValueError("not a DLPack capsule (or one already consumed)")
        self._managed = ctypes.cast(_api.PyCapsule_GetPointer(capsule, DLTENSOR), ctypes.POINTER(DLManagedTensor))
        _api.PyCapsule_SetName(capsule, USED)  # ours now: the capsule's destructor leaves it alone
        t = self._managed.contents.dl_tensor
        self.data = (t.data or 0) + t.byte_offset
        self.device = (t.device.device_type, t.device.device_id)
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.dtype = numpy_dtype(t.dtype)
        self.dtype_words = "code %d, %d bits, %d lanes" % (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        self.compact = True
        if t.strides and t.ndim:
            want = 1
            for i in reversed(range(t.ndim)):
                if self.shape[i] != 1 and t.strides[i] != want:
                    self.compact = False
                want *= self.shape[i]

    @property
    def nbytes(self):
        n = math.prod(self.shape) if self.shape else 1
        return n * (self.dtype.itemsize if self.dtype is not None else 0)

    def release(self):
        if self._managed:
            m, self._managed = self._managed, None
            if m.contents.deleter:
                m.contents.deleter(m)

    def __del__(self):
        self.release()


# ---- producing ------------------------------------------------------------------------------------------

_exports = {}  # address of a DLManagedTensor -> what it keeps alive, until its deleter runs


@DELETER
def _delete(managed):
    _exports.pop(ctypes.addressof(managed.contents), None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    if _raw.PyCapsule_IsValid(capsule, DLTENSOR):  # never consumed: the producer cleans up
        m = ctypes.cast(_raw.PyCapsule_GetPointer(capsule, DLTENSOR), ctypes.POINTER(DLManagedTensor))
        m.contents.deleter(m)


def export(owner, data, device, shape, dtype):
    """A "dltensor" capsule over data (an address) on device (type, id), of a
    C-contiguous shape and a numpy dtype; owner stays alive until the
    consumer's deleter call."""
    dtype = np.dtype(dtype)
    if dtype not in _CODE_OF:
        raise ValueError("DLPack has no type for numpy %s" % dtype.name)
    code, bits = _CODE_OF[dtype]
    m = DLManagedTensor()
    shape_arr = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    m.dl_tensor = DLTensor(data, DLDevice(*device), len(shape), DLDataType(code, bits, 1),
                           ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64)), None, 0)
    m.deleter = _delete
    _exports[ctypes.addressof(m)] = (m, shape_arr, owner)
    return _api.PyCapsule_New(ctypes.addressof(m), DLTENSOR, ctypes.cast(_capsule_destructor, ctypes.c_void_p))
