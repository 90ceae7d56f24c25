"""kcrt.safetensors — read and write the safetensors format with numpy
alone (no torch, no `safetensors` package), for model weights.

The format (huggingface/safetensors, README "Format"): an unsigned 64-bit
little-endian header length N, N bytes of JSON, then the tensors' bytes.
The JSON maps each name to {"dtype", "shape", "data_offsets": [begin,
end]} (offsets into the byte area after the header, row-major,
little-endian), plus an optional "__metadata__" of string to string.

    tensors, meta = kcrt.safetensors.load("G_40k.safetensors")
    kcrt.safetensors.save("out.safetensors", {"w": array}, {"sr": "40000"})

A damaged file is refused with a kcrt.Error that says what is wrong and
where (a header past the end, a tensor whose bytes do not match its shape,
overlapping or out-of-range offsets); nothing is read past the file.
"""
import json
import math
import struct

import numpy as np

# safetensors dtype -> numpy dtype (little-endian); BF16 is widened to float32 on load
_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?", "BF16": "<u2",
}
_NAMES = {np.dtype(v).str: k for k, v in _DTYPES.items() if k != "BF16"}
_MAX_HEADER = 100 << 20  # as the reference implementation: a larger header is a damaged file


def _fail(path, words):
    from . import Error
    raise Error("%s: not a valid safetensors file: %s" % (path, words))


def load(path):
    """(dict of name -> numpy array, dict of metadata strings). Arrays are
    copies in native byte order; BF16 tensors come back as float32."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        _fail(path, "%d bytes, shorter than the 8-byte header length" % len(data))
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER or 8 + n > len(data):
        _fail(path, "the header claims %d bytes but the file has %d after the length" % (n, len(data) - 8))
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        _fail(path, "the header is not JSON (%s)" % e)
    if not isinstance(header, dict):
        _fail(path, "the header is not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        _fail(path, "__metadata__ must map strings to strings")
    body = memoryview(data)[8 + n:]
    out, spans = {}, []
    for name, info in header.items():
        try:
            dtype, shape, (begin, end) = info["dtype"], [int(s) for s in info["shape"]], info["data_offsets"]
        except (TypeError, KeyError, ValueError):
            _fail(path, "tensor %r: expected dtype, shape and data_offsets [begin, end]" % name)
        if dtype not in _DTYPES:
            _fail(path, "tensor %r: unknown dtype %r" % (name, dtype))
        if any(s < 0 for s in shape) or not (isinstance(begin, int) and isinstance(end, int)):
            _fail(path, "tensor %r: bad shape %s or offsets %r" % (name, shape, info["data_offsets"]))
        item = np.dtype(_DTYPES[dtype]).itemsize
        count = math.prod(shape)
        if not 0 <= begin <= end <= len(body) or end - begin != count * item:
            _fail(path, "tensor %r: bytes [%d, %d) of a %d-byte data area, but %s %s needs %d" % (
                name, begin, end, len(body), dtype, shape, count * item))
        spans.append((begin, end, name))
        a = np.frombuffer(body[begin:end], dtype=_DTYPES[dtype]).reshape(shape)
        if dtype == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        out[name] = a.astype(a.dtype.newbyteorder("="), copy=True)
    spans.sort()
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            _fail(path, "tensors %r and %r overlap" % (n0, n1))
    return out, dict(meta)


def save(path, tensors, metadata=None):
    """Writes name -> array (any of the dtypes above but bfloat16) and
    optional metadata (str -> str), in name order, 8-byte aligned as the
    reference writer does."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        key = a.dtype.newbyteorder("<").str if a.dtype.byteorder != "|" else a.dtype.str
        if key not in _NAMES:
            raise ValueError("kcrt.safetensors.save: tensor %r has dtype %s, which safetensors cannot hold" % (
                name, a.dtype))
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _NAMES[key], "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
