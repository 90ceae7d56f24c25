"""_lib — libkcrt through ctypes: finding the library, the C types, and the
functions' signatures. Nothing here is API; kcrt/__init__.py is.

The library is looked for in this order (DESIGN.md §10):
  1. $KCRT_LIBRARY, a path to libkcrt.so (kcrt.dll on Windows);
  2. the installed one: libkcrt.so.0 on the dynamic linker's path, then
     under this Python environment's prefix (lib/, lib64/); on Windows
     kcrt.dll beside this package's files (an app ships it there), then
     in the prefix's bin/ (cmake --install puts it beside kc.exe) and
     Library/bin/ (conda), then on the DLL search path;
  3. the kc build tree this package was built from (kcrt/_where.py).
"""
import ctypes
import os
import sys

# kcrt_status, in kc/kcrt.h's order
STATUS_NAMES = [
    "KCRT_OK", "KCRT_ERROR_BAD_ARGUMENT", "KCRT_ERROR_NO_BACKEND", "KCRT_ERROR_NO_DEVICE", "KCRT_ERROR_IO",
    "KCRT_ERROR_BAD_BUNDLE", "KCRT_ERROR_NO_KERNEL", "KCRT_ERROR_NO_VARIANT", "KCRT_ERROR_UNSUPPORTED",
    "KCRT_ERROR_OUT_OF_MEMORY", "KCRT_ERROR_DEVICE_ERROR", "KCRT_ERROR_OUT_OF_BOUNDS",
]

# kcrt_arg_type
ARG_I32, ARG_U32, ARG_F32, ARG_F16, ARG_BOOL, ARG_BUF = 1, 2, 3, 4, 5, 6
# kcrt_param_kind
PARAM_BUFFER, PARAM_SCALAR = 0, 1


class ArgValue(ctypes.Union):
    _fields_ = [("i32", ctypes.c_int32), ("u32", ctypes.c_uint32), ("f32", ctypes.c_float),
                ("f16", ctypes.c_uint16), ("b", ctypes.c_bool), ("buf", ctypes.c_void_p)]


class Arg(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("v", ArgValue)]


class Options(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_char_p), ("device", ctypes.c_int)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("type", ctypes.c_int),
                ("type_name", ctypes.c_char_p), ("elem_bytes", ctypes.c_size_t), ("readonly", ctypes.c_bool),
                ("extent", ctypes.c_char_p), ("extent_text", ctypes.c_char_p), ("ndims", ctypes.c_int),
                ("dims", ctypes.c_void_p), ("init", ctypes.c_int)]


class KernelInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("source_hash", ctypes.c_char_p), ("nparams", ctypes.c_int),
                ("params", ctypes.POINTER(ParamInfo)), ("ntunables", ctypes.c_int), ("tunables", ctypes.c_void_p),
                ("nconstraints", ctypes.c_int), ("constraints", ctypes.c_void_p), ("nshapes", ctypes.c_int),
                ("shapes", ctypes.c_void_p), ("wg", ctypes.c_char_p), ("grid", ctypes.c_char_p),
                ("grid_text", ctypes.c_char_p), ("may_alias", ctypes.c_bool),
                ("default_variant", ctypes.c_char_p), ("tolerance", ctypes.c_double), ("init", ctypes.c_char_p),
                ("bytes", ctypes.c_char_p), ("flops", ctypes.c_char_p), ("nvariants", ctypes.c_int),
                ("variants", ctypes.c_void_p)]


class Stats(ctypes.Structure):  # kcrt_internal.h's kcrt_stats
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "launches", "dispatches", "submissions", "transfer_submissions", "waits", "barriers",
        "pipelines_created", "descriptor_sets_allocated", "descriptor_sets_reused", "descriptor_pools_created",
        "command_buffers_allocated", "staging_bytes", "staging_resizes", "buffers_live", "bundles_live",
        "buffer_allocations", "buffers_reused", "spare_bytes")]


def _build_tree():
    try:
        from . import _where
        return _where.BUILD_TREE
    except ImportError:  # run from the source tree, not installed
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return os.path.join(here, "build")


def _candidates(platform=None, environ=None, prefix=None):
    """Where libkcrt may be, in the order tried (arguments: for tests)."""
    platform = platform or sys.platform
    environ = os.environ if environ is None else environ
    prefix = prefix or sys.prefix
    env = environ.get("KCRT_LIBRARY")
    if env:
        return [env]  # asked for: nothing else is tried
    if platform == "win32":
        # full paths first: Python's DLL search leaves out PATH
        package = os.path.dirname(os.path.abspath(__file__))
        out = [os.path.join(package, "kcrt.dll")]
        out += [os.path.join(prefix, d, "kcrt.dll") for d in ("bin", os.path.join("Library", "bin"))]
        out += ["kcrt.dll", os.path.join(_build_tree(), "runtime", "kcrt.dll")]
        return out
    out = ["libkcrt.so.0"]
    for lib in ("lib", "lib64"):
        out.append(os.path.join(prefix, lib, "libkcrt.so.0"))
    out.append(os.path.join(_build_tree(), "runtime", "libkcrt.so.0"))
    return out


def _where_loaded(name):
    """The file the dynamic linker took for a bare library name (Linux:
    /proc/self/maps), else the name."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith("libkcrt.so"):
                    return path
    except OSError:
        pass
    return name


def _load():
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            return lib, path if os.sep in path else _where_loaded(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("kcrt: cannot load libkcrt; tried " + "; ".join(tried) +
                      ". Set KCRT_LIBRARY to the path of %s, or install kc (cmake --install)." %
                      ("kcrt.dll" if sys.platform == "win32" else "libkcrt.so"))


lib, path = _load()

P = ctypes.c_void_p
_SIGNATURES = {
    "kcrt_open": (ctypes.c_int, [ctypes.POINTER(P), ctypes.POINTER(Options)]),
    "kcrt_close": (None, [P]),
    "kcrt_error": (ctypes.c_char_p, [P]),
    "kcrt_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "kcrt_device_name": (ctypes.c_char_p, [P]),
    "kcrt_backend_name": (ctypes.c_char_p, [P]),
    "kcrt_bundle_load": (ctypes.c_int, [P, ctypes.c_char_p, ctypes.POINTER(P)]),
    "kcrt_bundle_free": (None, [P]),
    "kcrt_bundle_kernel_count": (ctypes.c_int, [P]),
    "kcrt_bundle_kernel_info": (ctypes.POINTER(KernelInfo), [P, ctypes.c_int]),
    "kcrt_kernel_get": (ctypes.c_int, [P, ctypes.c_char_p, ctypes.POINTER(P)]),
    "kcrt_kernel_get_variant": (ctypes.c_int, [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(P)]),
    "kcrt_kernel_info_get": (ctypes.POINTER(KernelInfo), [P]),
    "kcrt_kernel_choose": (ctypes.c_int, [P, ctypes.POINTER(Arg), ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]),
    "kcrt_buffer_create": (ctypes.c_int, [P, ctypes.c_size_t, ctypes.POINTER(P)]),
    "kcrt_buffer_free": (None, [P]),
    "kcrt_buffer_write": (ctypes.c_int, [P, ctypes.c_size_t, P, ctypes.c_size_t]),
    "kcrt_buffer_read": (ctypes.c_int, [P, ctypes.c_size_t, P, ctypes.c_size_t]),
    "kcrt_buffer_copy": (ctypes.c_int, [P, ctypes.c_size_t, P, ctypes.c_size_t, ctypes.c_size_t]),
    "kcrt_buffer_size": (ctypes.c_size_t, [P]),
    "kcrt_launch": (ctypes.c_int, [P, ctypes.POINTER(Arg), ctypes.c_size_t]),
    "kcrt_finish": (ctypes.c_int, [P]),
    "kcrt_f32_to_f16": (ctypes.c_uint16, [ctypes.c_float]),
    "kcrt_stats_get": (None, [P, ctypes.POINTER(Stats)]),
    "kcrt_buffer_wrap": (ctypes.c_int, [P, P, ctypes.c_size_t, ctypes.POINTER(P)]),
    "kcrt_buffer_native": (ctypes.c_int, [P, ctypes.POINTER(P), ctypes.POINTER(ctypes.c_int)]),
    "kcrt_set_stream": (ctypes.c_int, [P, P]),
}
for _name, (_ret, _args) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _ret
    _fn.argtypes = _args
