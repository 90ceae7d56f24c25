"""kcrt.nn — torch-named ops over a kc bundle of the shipped kernel package
(kernels/): swap `torch.nn.functional.X(...)` for `ops.X(...)`.

    ops = kcrt.nn.Ops(ctx.load("rvc.kcb"))
    y = ops.conv1d(x, w, b, padding=3, dilation=3)     # a kcrt.Tensor
    y.numpy()

Inputs are float32 numpy arrays or kcrt.Tensors (float16 for linear,
conv1d and scaled_dot_product_attention too); results are kcrt.Tensors
that stay on the device. Argument names, defaults, shapes and results are
torch's; a wrong shape or type is a kcrt.Error with torch's words. What the
shipped kernels do not cover (softmax over another than the last
dimension, a float16 strided or grouped conv1d) is a kcrt.Error that says
so, or a documented detour, never a wrong answer.
The module-level functions use kcrt.default_context() and the bundle at
$KCRT_BUNDLE, else the installed share/kc/rvc.kcb. docs/python.md lists each op and its kernel.
"""
import math
import os

import numpy as np

from . import Error, Tensor, default_context

__all__ = ["Ops", "conv1d", "conv_transpose1d", "linear", "matmul", "bmm", "layer_norm", "softmax", "relu", "leaky_relu",
           "sigmoid", "tanh", "silu", "gelu", "log", "exp", "clamp", "add", "mul", "pad", "interpolate", "log_softmax", "group_norm", "spectrogram", "mel_spectrogram",
           "melscale_fbanks", "scaled_dot_product_attention", "resample",
           "sine_source", "yin", "conv2d", "gru"]

# kernels/pad1d.kc's modes
_PAD = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}

# scaled_dot_product_attention: query rows up to this take attention_decode
_DECODE_ROWS = 4

# kernels/elementwise.kc's ops
_EW = {"relu": 0, "leaky_relu": 1, "sigmoid": 2, "tanh": 3, "silu": 4, "gelu": 5, "gelu_tanh": 6, "add": 7,
       "mul": 8, "add_scalar": 9, "mul_scalar": 10, "log": 11, "exp": 12, "clamp_min": 13, "clamp_max": 14}


def _fail(op, words):
    raise Error("%s: %s" % (op, words))


class Ops:
    """The ops over one loaded bundle (its context's device)."""

    def __init__(self, bundle):
        self.bundle = bundle
        self.ctx = bundle.ctx
        self._kernels = {}

    def _kernel(self, op, name):
        if name not in self._kernels:
            if name not in self.bundle.kernels:
                _fail(op, "the bundle %s has no kernel '%s' (build it from kc's kernels/)" % (self.bundle.path, name))
            self._kernels[name] = self.bundle.kernel(name)
        return self._kernels[name]

    def _tensor(self, op, name, x, ndims=None):
        """x as a float32 Tensor of this context (numpy arrays are uploaded)."""
        if isinstance(x, Tensor):
            if x.ctx is not self.ctx:
                _fail(op, "'%s' is a tensor of another context" % name)
            t = x
        elif isinstance(x, np.ndarray):
            if x.dtype != np.float32:
                _fail(op, "expected scalar type Float but found %s for argument '%s'" % (_torch_name(x.dtype), name))
            t = self.ctx.tensor(x)
        else:
            _fail(op, "argument '%s' must be a numpy array or kcrt.Tensor, not %s" % (name, type(x).__name__))
        if t.dtype != np.float32:
            _fail(op, "expected scalar type Float but found %s for argument '%s'" % (_torch_name(t.dtype), name))
        if ndims is not None and len(t.shape) not in ndims:
            _fail(op, "expected %s-D input for '%s', but got input of size: %s" % (
                " or ".join(str(n) for n in ndims), name, list(t.shape)))
        return t

    def _host(self, op, name, x, ndims=None):
        """x as a float32 numpy array, for an op that needs its values on the
        host: a numpy array as it is (no upload and read-back), a Tensor
        read back; _tensor's checks and errors."""
        if isinstance(x, np.ndarray) and x.dtype == np.float32 and (ndims is None or x.ndim in ndims):
            return x
        return self._tensor(op, name, x, ndims).numpy()

    def _zeros(self, shape):
        return self.ctx.tensor(np.zeros(shape, np.float32))

    def _rows(self, t, n):
        """The rows of a tensor whose batch dims the kernel cannot take:
        Tensors per batch item. A batch of one is the tensor's own buffer;
        more items are copies made on the device (kernels take whole
        buffers)."""
        if len(t.shape) <= n:
            return [t]
        items, shape = math.prod(t.shape[:-n]), tuple(t.shape[-n:])
        if items == 1:  # (1, C, T): a model's usual call, no copy
            return [Tensor(t.buffer, shape, t.dtype)]
        size = math.prod(shape) * t.dtype.itemsize
        rows = []
        for i in range(items):
            buf = self.ctx.buffer(max(16, (size + 15) // 16 * 16))
            buf.copy_from(t.buffer, size, src_offset=i * size)
            rows.append(Tensor(buf, shape, t.dtype))
        return rows

    # ---- convolutions -------------------------------------------------------------------------------

    def conv1d(self, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        return self._conv1d(input, weight, bias, stride, padding, dilation, groups)

    def _conv1d_leaky(self, input, weight, bias, padding, dilation, negative_slope):
        """leaky_relu(conv1d(input, weight, bias, padding=padding, dilation=dilation), negative_slope),
        the activation applied by conv1d's kernel to its sums: one launch and one pass over the result
        instead of two (kcrt.models' convolutions followed by a leaky ReLU)."""
        return self._conv1d(input, weight, bias, 1, padding, dilation, 1, float(negative_slope))

    def _conv1d(self, input, weight, bias, stride, padding, dilation, groups, slope=1.0):
        op = "conv1d"
        half = _dtype_of(input) == np.float16 or _dtype_of(weight) == np.float16
        x = self._operand(op, "input", input, (2, 3), half)
        w = self._operand(op, "weight", weight, (3,), half)
        cout, cin_g, ks = w.shape
        cin, t_in = x.shape[-2:]
        stride, dilation = _one(op, "stride", stride), _one(op, "dilation", dilation)
        if padding == "same" and stride != 1:
            _fail(op, "padding='same' is not supported for strided convolutions")
        padding = _padding(op, padding, dilation, ks)
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
            _fail(op, "non-positive groups is not supported")
        if cin != cin_g * groups:
            _fail(op, "Given groups=%d, weight of size %s, expected input%s to have %d channels, but got %d "
                  "channels instead" % (groups, list(w.shape), list(x.shape), cin_g * groups, cin))
        if cout % groups:
            _fail(op, "Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of "
                  "size %s instead" % (groups, groups, list(w.shape)))
        t_out = (t_in + 2 * padding - dilation * (ks - 1) - 1) // stride + 1
        if t_out < 1:
            _fail(op, "Calculated output size: (%d x %d). Output size is too small" % (cout, t_out))
        if half or stride != 1 or groups != 1:
            if half:
                y = self._conv1d_f16(op, x, w, bias, stride, padding, dilation, groups, t_out)
            else:  # strided and grouped (depthwise too): conv2d's kernel over a height of 1, one launch
                n = x.size // (cin * t_in)
                y = self.conv2d(Tensor(x.buffer, (n, cin, 1, t_in), np.float32),
                                Tensor(w.buffer, (cout, cin_g, 1, ks), np.float32), bias, (1, stride),
                                (0, padding), (1, dilation), groups)
                y = Tensor(y.buffer, x.shape[:-2] + (cout, t_out), np.float32)
            return y if slope == 1.0 else self.leaky_relu(y, slope)
        b = self._bias(op, bias, cout)
        k = self._kernel(op, "conv1d")
        outs = []
        for xi in self._rows(x, 2):
            y = Tensor(self.ctx.buffer(_bytes(cout * t_out)), (cout, t_out), np.float32)
            k.launch(cin, cout, t_in, ks, dilation, padding, slope, xi, w, b, y)
            outs.append(y)
        return self._stack(outs, x.shape[:-2] + (cout, t_out))

    def _conv1d_f16(self, op, x, w, bias, stride, padding, dilation, groups, t_out):
        """conv1d on float16 tensors: kernels/conv1d_f16.kc (half storage,
        float sums, one rounding to half) for stride 1 and groups 1; the
        others through the float32 kernels on widened copies (a host round
        trip each way), rounded to half at the end, as torch's half conv
        rounds its float sums."""
        cout, _, ks = w.shape
        cin, t_in = x.shape[-2:]
        if stride != 1 or groups != 1:
            b = None if bias is None else self._float_vector(op, "bias", bias, cout)
            y = self.conv1d(x.numpy().astype(np.float32), w.numpy().astype(np.float32), b, stride, padding,
                            dilation, groups)
            return self.ctx.tensor(y.numpy().astype(np.float16))
        b = self._zeros(cout) if bias is None else self._float_vector(op, "bias", bias, cout)
        outs = []
        for xi in self._rows(x, 2):
            y = self._half_out((cout, t_out))
            self._launch_f16(op, "conv1d_f16", cin, cout, t_in, ks, dilation, padding, 1.0, xi, w, b, y)
            outs.append(y)
        return self._stack(outs, x.shape[:-2] + (cout, t_out))

    def conv_transpose1d(self, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                         dilation=1):
        op = "conv_transpose1d"
        x = self._tensor(op, "input", input, (2, 3))
        w = self._tensor(op, "weight", weight, (3,))
        cin_w, cout_g, ks = w.shape
        cin, t_in = x.shape[-2:]
        stride, padding = _one(op, "stride", stride), _one(op, "padding", padding)
        output_padding, dilation = _one(op, "output_padding", output_padding), _one(op, "dilation", dilation)
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
            _fail(op, "non-positive groups is not supported")
        if dilation < 1:
            _fail(op, "dilation should be greater than zero")
        if cin_w % groups:
            _fail(op, "Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of "
                  "size %s instead" % (groups, groups, list(w.shape)))
        if cin != cin_w:
            _fail(op, "Given transposed=1, weight of size %s, expected input%s to have %d channels, but got %d "
                  "channels instead" % (list(w.shape), list(x.shape), cin_w, cin))
        if output_padding >= stride and output_padding >= dilation:
            _fail(op, "output padding must be smaller than either stride or dilation, but got output_padding: "
                  "%d, stride: %d, dilation: %d" % (output_padding, stride, dilation))
        cout = cout_g * groups
        t_out = (t_in - 1) * stride - 2 * padding + dilation * (ks - 1) + output_padding + 1
        if t_out < 1:
            _fail(op, "Calculated output size: (%d x %d). Output size is too small" % (cout, t_out))
        b = self._bias(op, bias, cout)
        if dilation > 1:
            # taps dilation apart: the kernel on an equivalent weight with zeros between them, made on
            # the host (the zeros add exact zeros; dilated transposed convolutions are rare enough
            # that the dilation - 1 wasted taps of ks are not worth a design of their own)
            wd = np.zeros((cin, cout_g, dilation * (ks - 1) + 1), np.float32)
            wd[:, :, ::dilation] = w.numpy()
            w, ks = self.ctx.tensor(wd), wd.shape[2]
        k = self._kernel(op, "conv_transpose1d")  # groups in the kernel: each group a dense layer of its own
        outs = []
        for xi in self._rows(x, 2):
            y = Tensor(self.ctx.buffer(_bytes(cout * t_out)), (cout, t_out), np.float32)
            k.launch(cin, cout, t_in, ks, stride, padding, output_padding, groups, xi, w, b, y)
            outs.append(y)
        return self._stack(outs, x.shape[:-2] + (cout, t_out))

    def conv2d(self, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        """torch.nn.functional.conv2d of (N, C, H, W) or (C, H, W) input."""
        op = "conv2d"
        x = self._tensor(op, "input", input, (3, 4))
        w = self._tensor(op, "weight", weight, (4,))
        squeeze = len(x.shape) == 3
        n, cin, h, wd = (1,) + tuple(x.shape) if squeeze else tuple(x.shape)
        cout, cig, kh, kw = w.shape
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
            _fail(op, "non-positive groups is not supported")
        if cin != cig * groups:
            _fail(op, "Given groups=%d, weight of size %s, expected input%s to have %d channels, but got %d channels "
                  "instead" % (groups, list(w.shape), list(x.shape), cig * groups, cin))
        if cout % groups:
            _fail(op, "Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of "
                  "size %s instead" % (groups, groups, list(w.shape)))
        sh, sw = _pair(op, "stride", stride)
        dh, dw = _pair(op, "dilation", dilation)
        if padding == "same":
            if (sh, sw) != (1, 1):
                _fail(op, "padding='same' is not supported for strided convolutions")
            th, tw = dh * (kh - 1), dw * (kw - 1)
            if th % 2 or tw % 2:
                _fail(op, "padding='same' with an odd total padding (%d, %d): the shipped kernel pads both sides alike"
                      % (th, tw))
            ph, pw = th // 2, tw // 2
        elif padding == "valid":
            ph, pw = 0, 0
        else:
            ph, pw = _pair(op, "padding", padding, zero_ok=True)
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        if oh < 1 or ow < 1:
            _fail(op, "Calculated padded input size per channel: (%d x %d). Kernel size: (%d x %d). Kernel size "
                  "can't be greater than actual input size" % (h + 2 * ph, wd + 2 * pw, dh * (kh - 1) + 1,
                                                               dw * (kw - 1) + 1))
        b = self._bias(op, bias, cout)
        y = Tensor(self.ctx.buffer(_bytes(n * cout * oh * ow)), (n, cout, oh, ow), np.float32)
        self._kernel(op, "conv2d").launch(n, cin, h, wd, cout, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, groups, x, w,
                                          b, y)
        return Tensor(y.buffer, (cout, oh, ow), np.float32) if squeeze else y

    # ---- recurrent (kernels/gru_step.kc, gemm.kc) ----------------------------------------------------------

    def gru(self, input, weight_ih, weight_hh, bias_ih=None, bias_hh=None, hx=None, batch_first=False,
            reverse=False):
        """One direction of one torch.nn.GRU layer, with its parameters as
        the module names them (weight_ih_l0, weight_hh_l0, bias_ih_l0,
        bias_hh_l0; the _reverse ones with reverse=True): input (L, N, I)
        ((N, L, I) with batch_first, or (L, I)) -> (output (L, N, H), h_n
        (N, H)). A bidirectional layer is two calls and a concatenation of
        the outputs on the last dimension, as torch.nn.GRU does. The input
        side of every step is one gemm; the recurrence one gru_step launch
        a step."""
        op = "gru"
        x = self._tensor(op, "input", input, (2, 3))
        wih = self._tensor(op, "weight_ih", weight_ih, (2,))
        whh = self._tensor(op, "weight_hh", weight_hh, (2,))
        unbatched = len(x.shape) == 2
        xa = x.numpy()
        if unbatched:
            xa = xa[:, None, :]
        elif batch_first:
            xa = np.ascontiguousarray(xa.transpose(1, 0, 2))
        steps, batch, isz = xa.shape
        h3, hid = whh.shape
        if h3 != 3 * hid or tuple(wih.shape) != (3 * hid, isz):
            _fail(op, "weight_ih %s and weight_hh %s do not make a GRU of input size %d (expected [%d, %d] and "
                  "[%d, %d])" % (list(wih.shape), list(whh.shape), isz, 3 * hid, isz, 3 * hid, hid))
        bih = self._bias(op, bias_ih, 3 * hid)
        bhh = self._bias(op, bias_hh, 3 * hid)
        if hx is None:
            h = self._zeros(batch * hid)
        else:
            ha = hx.numpy() if isinstance(hx, Tensor) else np.asarray(hx, np.float32)
            if ha.size != batch * hid:
                _fail(op, "Expected hidden size %s, got %s" % ([1, batch, hid], list(ha.shape)))
            h = self.ctx.tensor(np.ascontiguousarray(ha.reshape(batch * hid), np.float32))
        out = Tensor(self.ctx.buffer(_bytes(steps * batch * hid)), (steps, batch, hid), np.float32)
        if steps and batch:
            gi = self.linear(self.ctx.tensor(xa.reshape(steps * batch, isz)), wih, bih)  # every step's input side
            other = Tensor(self.ctx.buffer(_bytes(batch * hid)), (batch * hid,), np.float32)
            k = self._kernel(op, "gru_step")
            for i in range(steps):
                t = steps - 1 - i if reverse else i
                k.launch(batch, hid, t, steps, gi, whh, bhh, h, other, out)
                h, other = other, h
        h_n = Tensor(h.buffer, (batch, hid), np.float32)
        if unbatched:
            return Tensor(out.buffer, (steps, hid), np.float32), Tensor(h.buffer, (hid,), np.float32)
        if batch_first:
            self.ctx.finish()
            out = self.ctx.tensor(np.ascontiguousarray(out.numpy().transpose(1, 0, 2)))
        return out, h_n

    # ---- linear, norms, softmax ---------------------------------------------------------------------------

    def linear(self, input, weight, bias=None):
        op = "linear"
        if _dtype_of(input) == np.float16 or _dtype_of(weight) == np.float16:
            return self._linear_f16(op, input, weight, bias)
        x = self._tensor(op, "input", input)
        w = self._tensor(op, "weight", weight, (1, 2))
        if len(x.shape) < 1:
            _fail(op, "input must have at least one dimension")
        w2 = w if len(w.shape) == 2 else Tensor(w.buffer, (1, w.shape[0]), np.float32)
        n, kdim = w2.shape
        if x.shape[-1] != kdim:
            rows = math.prod(x.shape[:-1])
            _fail(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (rows, x.shape[-1], kdim, n))
        m = math.prod(x.shape[:-1])
        has_bias = bias is not None
        b = self._bias(op, bias, n)
        y = Tensor(self.ctx.buffer(_bytes(m * n)), x.shape[:-1] + (n,), np.float32)
        if m == 1:  # batch-1 decode: W as torch keeps it
            self._kernel(op, "gemv").launch(n, kdim, has_bias, w2, x, b, y)
        elif "linear" in self.bundle.kernels:  # W as torch keeps it too (kernels/linear.kc)
            self._kernel(op, "linear").launch(m, n, kdim, has_bias, 0, 0.0, x, w2, b, y)
        else:  # a bundle from before linear.kc: C = A B with B = W^T, transposed through the host
            wt = self.ctx.tensor(np.ascontiguousarray(w2.numpy().T))
            self._kernel(op, "gemm").launch(m, n, kdim, has_bias, 0, 0.0, x, wt, b, y)
        return y if len(w.shape) == 2 else Tensor(y.buffer, x.shape[:-1], np.float32)

    def matmul(self, input, other):
        """torch.matmul on float32: 1-D, 2-D and batched (..., M, K) @ (..., K, N) with the batch dims
        broadcast; gemm for one product, one bmm launch for a batch (kernels/bmm.kc)."""
        return self._matmul("matmul", self._tensor("matmul", "input", input), self._tensor("matmul", "other", other))

    def bmm(self, input, mat2):
        """torch.bmm: (b, n, m) @ (b, m, p) -> (b, n, p), float32."""
        op = "bmm"
        a, b = self._tensor(op, "input", input), self._tensor(op, "mat2", mat2)
        if len(a.shape) != 3 or len(b.shape) != 3:
            _fail(op, "batch1 must be a 3D tensor" if len(a.shape) != 3 else "batch2 must be a 3D tensor")
        if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
            _fail(op, "Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d]."
                  % (a.shape[0], a.shape[2], b.shape[0], b.shape[1]))
        return self._matmul(op, a, b)

    def _matmul(self, op, a, b):
        if not a.shape or not b.shape:
            _fail(op, "both arguments to matmul need to be at least 1D, but they are %dD and %dD"
                  % (len(a.shape), len(b.shape)))
        a2 = a if len(a.shape) > 1 else Tensor(a.buffer, (1,) + a.shape, np.float32)   # torch: a 1-D input is a row
        b2 = b if len(b.shape) > 1 else Tensor(b.buffer, b.shape + (1,), np.float32)   # ... and other a column
        (m, k), (k2, n) = a2.shape[-2:], b2.shape[-2:]
        if k != k2:
            _fail(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (m, k, k2, n))
        try:
            batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
        except ValueError:
            _fail(op, "The size of tensor a (%s) must match the size of tensor b (%s) at a non-singleton dimension"
                  % (list(a2.shape[:-2]), list(b2.shape[:-2])))
        shape = batch + ((m,) if len(a.shape) > 1 else ()) + ((n,) if len(b.shape) > 1 else ())
        items = math.prod(batch)
        if items * m * n == 0:
            return self._zeros(shape)
        y = Tensor(self.ctx.buffer(_bytes(items * m * n)), shape, np.float32)
        if not batch:
            self._kernel(op, "gemm").launch(m, n, k, False, 0, 0.0, a2, b2, self._zeros(n), y)
            return y
        # one bmm launch for the whole batch: an operand whose batch dims are all 1 is read by every
        # item (stride 0); one broadcast over only some dims is expanded on the host first
        a3, sa = self._batch_operand(a2, batch, m * k)
        b3, sb = self._batch_operand(b2, batch, k * n)
        self._kernel(op, "bmm").launch(items, m, n, k, sa, sb, False, 0, 0.0, a3, b3, self._zeros(n), y)
        return y

    def _batch_operand(self, t, batch, size):
        """t (..., R, C) for bmm over the batch dims `batch`: the tensor and
        its batch stride in floats."""
        tb = t.shape[:-2]
        if math.prod(tb) == 1:
            return t, 0
        if tuple(tb) == tuple(batch):
            return t, size
        return self.ctx.tensor(np.ascontiguousarray(np.broadcast_to(t.numpy(), batch + t.shape[-2:]))), size

    def _linear_f16(self, op, input, weight, bias):
        """linear on float16 tensors (kernels/linear_f16.kc, gemv_f16.kc for
        one row; W as torch keeps it): half storage, float sums, a float16
        result, as torch's on half.
        Needs the device's 16-bit storage; a kcrt.Error says so where it has
        none."""
        x, w = self._half(op, "input", input), self._half(op, "weight", weight)
        if len(w.shape) != 2:
            _fail(op, "the float16 path takes a 2-D weight, got %s" % list(w.shape))
        n, kdim = w.shape
        if not x.shape or x.shape[-1] != kdim:
            rows = math.prod(x.shape[:-1]) if x.shape else 1
            _fail(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (
                rows, x.shape[-1] if x.shape else 0, kdim, n))
        m = math.prod(x.shape[:-1])
        b = self._zeros(n) if bias is None else self._float_vector(op, "bias", bias, n)
        y = self._half_out(x.shape[:-1] + (n,))
        if m == 1 and "gemv_f16" in self.bundle.kernels:  # a decode step: gemv's body on half4 views
            self._launch_f16(op, "gemv_f16", n, kdim, bias is not None, w, x, b, y)
        elif "linear_f16" in self.bundle.kernels:
            self._launch_f16(op, "linear_f16", m, n, kdim, bias is not None, x, w, b, y)
        else:  # a bundle from before linear_f16.kc: gemm_f16 on W^T, transposed through the host
            wt = self.ctx.tensor(np.ascontiguousarray(w.numpy().T))
            self._launch_f16(op, "gemm_f16", m, n, kdim, bias is not None, x, wt, b, y)
        return y

    def _launch_f16(self, op, kernel, *args):
        """A launch of a float16 kernel; where the device has no 16-bit
        storage, a kcrt.Error that says so."""
        try:
            self._kernel(op, kernel).launch(*args)
        except Error as e:
            if "16-bit storage" in str(e):
                _fail(op, "float16 needs 16-bit storage buffers, which %s does not offer (%s)"
                      % (self.ctx.device_name, e))
            raise

    def _half_out(self, shape):
        n = math.prod(shape)
        return Tensor(self.ctx.buffer(max(16, (2 * n + 15) // 16 * 16)), tuple(shape), np.float16)

    def _float_vector(self, op, name, v, n):
        """A float16 op's bias (float16 or float32, n values) as float32 on the
        device: the kernels add it to their float sums. A float32 tensor of
        this context is used as it is (no read-back)."""
        if isinstance(v, Tensor) and v.ctx is self.ctx and v.dtype == np.float32 and v.shape == (n,):
            return v
        a = v.numpy() if isinstance(v, Tensor) else np.asarray(v)
        if a.shape != (n,):
            _fail(op, "expected %s of size [%d], but got %s of size %s" % (name, n, name, list(a.shape)))
        if a.dtype not in (np.float16, np.float32):
            _fail(op, "expected scalar type Half but found %s for argument '%s'" % (_torch_name(a.dtype), name))
        return self.ctx.tensor(a.astype(np.float32))

    def _operand(self, op, name, v, ndims, half):
        """A float32 operand (_tensor), or a float16 one when the op runs in
        half precision."""
        if not half:
            return self._tensor(op, name, v, ndims)
        t = self._half(op, name, v)
        if ndims is not None and len(t.shape) not in ndims:
            _fail(op, "expected %s-D input for '%s', but got input of size: %s" % (
                " or ".join(str(n) for n in ndims), name, list(t.shape)))
        return t

    def _half(self, op, name, v):
        if isinstance(v, Tensor):
            if v.ctx is not self.ctx:
                _fail(op, "'%s' is a tensor of another context" % name)
            if v.dtype != np.float16:
                _fail(op, "expected both operands to be float16 (got %s for '%s')" % (_torch_name(v.dtype), name))
            return v
        a = np.asarray(v)
        if a.dtype != np.float16:
            _fail(op, "expected both operands to be float16 (got %s for '%s')" % (_torch_name(a.dtype), name))
        return self.ctx.tensor(np.ascontiguousarray(a))

    def layer_norm(self, input, normalized_shape, weight=None, bias=None, eps=1e-05):
        op = "layer_norm"
        x = self._tensor(op, "input", input)
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not shape or tuple(x.shape[-len(shape):]) != shape:
            _fail(op, "Given normalized_shape=%s, expected input with shape [*, %s], but got input of size%s" % (
                list(shape), ", ".join(str(s) for s in shape), list(x.shape)))
        n = math.prod(shape)
        rows = x.size // n
        g = self._affine(op, "weight", weight, shape, 1.0)
        b = self._affine(op, "bias", bias, shape, 0.0)
        y = Tensor(self.ctx.buffer(_bytes(x.size)), x.shape, np.float32)
        self._kernel(op, "layernorm").launch(rows, n, float(eps), x, g, b, y)
        return y

    def group_norm(self, input, num_groups, weight=None, bias=None, eps=1e-05):
        """torch.nn.functional.group_norm of (N, C, *) input: group_norm.kc, one
        workgroup per (batch, group), the per-channel affine in the same pass."""
        op = "group_norm"
        x = self._tensor(op, "input", input)
        if len(x.shape) < 2:
            _fail(op, "Expected at least 2 dimensions for input tensor but received %d" % len(x.shape))
        n, c = x.shape[0], x.shape[1]
        if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)) or num_groups <= 0:
            _fail(op, "num_groups must be a positive integer, not %r" % (num_groups,))
        if c % num_groups:
            _fail(op, "Expected number of channels in input to be divisible by num_groups, but got input of "
                  "shape %s and num_groups=%d" % (list(x.shape), num_groups))
        if n * math.prod(x.shape[2:]) == 1:
            _fail(op, "Expected more than 1 value per channel when training, got input size %s" % list(x.shape))
        g = self._affine(op, "weight", weight, (c,), 1.0)
        b = self._affine(op, "bias", bias, (c,), 0.0)
        y = Tensor(self.ctx.buffer(_bytes(x.size)), x.shape, np.float32)
        if x.size:
            spatial = x.size // (n * c)
            self._kernel(op, "group_norm").launch(n, c, int(num_groups), spatial, float(eps), x, g, b, y)
        return y

    def softmax(self, input, dim=None, dtype=None, _op="softmax"):
        op, log = _op, _op == "log_softmax"
        x = self._tensor(op, "input", input)
        if dtype is not None and np.dtype(dtype) != np.float32:
            _fail(op, "dtype=%s: the shipped softmax computes in float32 only" % np.dtype(dtype).name)
        nd = max(len(x.shape), 1)
        if dim is None:
            dim = -1  # torch's implicit choice for 2-D and more; 0 for 0-D and 1-D is the same dim
        if not -nd <= dim < nd:
            _fail(op, "Dimension out of range (expected to be in range of [%d, %d], but got %d)" % (-nd, nd - 1, dim))
        if dim % nd != nd - 1:
            _fail(op, "dim=%d: the shipped softmax kernel works along the last dimension only (issue 12)" % dim)
        n = x.shape[-1] if x.shape else 1
        y = Tensor(self.ctx.buffer(_bytes(x.size)), x.shape, np.float32)
        if x.size:
            self._kernel(op, "softmax").launch(x.size // n, n, int(log), x, y)
        return y

    def log_softmax(self, input, dim=None, dtype=None):
        return self.softmax(input, dim, dtype, _op="log_softmax")

    # ---- the elementwise family (kernels/elementwise.kc) --------------------------------------------------

    def _ew(self, op, name, x, alpha=0.0, z=None):
        y = Tensor(self.ctx.buffer(_bytes(x.size)), x.shape, np.float32)
        if x.size:
            self._kernel(op, "elementwise").launch(x.size, _EW[name], float(alpha), x, z if z is not None else x, y)
        return y

    def _unary(self, op, input, inplace, name=None, alpha=0.0):
        if inplace:
            _fail(op, "inplace=True: kcrt.nn ops return new tensors")
        return self._ew(op, name or op, self._tensor(op, "input", input), alpha)

    def relu(self, input, inplace=False):
        return self._unary("relu", input, inplace)

    def leaky_relu(self, input, negative_slope=0.01, inplace=False):
        return self._unary("leaky_relu", input, inplace, alpha=negative_slope)

    def sigmoid(self, input):
        return self._unary("sigmoid", input, False)

    def tanh(self, input):
        return self._unary("tanh", input, False)

    def silu(self, input, inplace=False):
        return self._unary("silu", input, inplace)

    def gelu(self, input, approximate="none"):
        if approximate not in ("none", "tanh"):
            _fail("gelu", "approximate argument must be either none or tanh.")
        return self._unary("gelu", input, False, "gelu" if approximate == "none" else "gelu_tanh")

    def log(self, input):
        """torch.log: NaN below 0, -inf at 0 (the log-mel front ends take log(clamp(mel, min=1e-5)))."""
        return self._unary("log", input, False)

    def exp(self, input):
        """torch.exp."""
        return self._unary("exp", input, False)

    def clamp(self, input, min=None, max=None):
        """torch.clamp with number bounds: min first, then max (so min > max gives max, as torch)."""
        op = "clamp"
        if min is None and max is None:
            _fail(op, "At least one of 'min' or 'max' must not be None")
        for name, v in (("min", min), ("max", max)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))):
                _fail(op, "'%s' must be a number (tensor bounds are not supported yet), not %s" % (name, type(v).__name__))
        y = self._tensor(op, "input", input)
        if min is not None:
            y = self._ew(op, "clamp_min", y, min)
        if max is not None:
            y = self._ew(op, "clamp_max", y, max)
        return y

    def add(self, input, other, alpha=1):
        """input + alpha * other (torch.add): other a tensor or a number."""
        return self._binary("add", input, other, alpha)

    def mul(self, input, other):
        """input * other (torch.mul): other a tensor or a number."""
        return self._binary("mul", input, other, 1)

    def _binary(self, op, input, other, alpha):
        if isinstance(input, (int, float, np.number)) and not isinstance(other, (int, float, np.number)):
            if op == "add" and alpha != 1:  # a + alpha b with a a number: b scaled, then a added
                return self._binary("add", self.mul(other, alpha), input, 1)
            input, other = other, input  # commutes
        x = self._tensor(op, "input", input)
        if isinstance(other, (bool, np.bool_)) or isinstance(other, (int, float, np.number)):
            scalar = float(other) * (float(alpha) if op == "add" else 1.0)
            return self._ew(op, op + "_scalar", x, scalar)
        if isinstance(other, np.ndarray) and other.shape != x.shape:
            try:
                shape = np.broadcast_shapes(x.shape, other.shape)
            except ValueError:
                _fail(op, "The size of tensor a (%s) must match the size of tensor b (%s)" % (
                    list(x.shape), list(other.shape)))
            if shape != x.shape:
                x = self.ctx.tensor(np.broadcast_to(x.numpy(), shape))
            other = np.broadcast_to(other.astype(other.dtype, copy=False), shape)
        z = self._tensor(op, "other", other)
        if z.shape != x.shape:
            _fail(op, "The size of tensor a (%s) must match the size of tensor b (%s): broadcasting a device "
                  "tensor is not done yet (pass a numpy array)" % (list(x.shape), list(z.shape)))
        return self._ew(op, op, x, float(alpha), z)

    # ---- padding (kernels/pad1d.kc) ------------------------------------------------------------------------

    def pad(self, input, pad, mode="constant", value=None):
        """torch.nn.functional.pad of the last dimension: pad = (left, right)."""
        op = "pad"
        x = self._tensor(op, "input", input)
        pad = tuple(pad)
        if len(pad) % 2:
            _fail(op, "Padding length must be divisible by 2")
        if len(pad) != 2:
            _fail(op, "pad=%s: the shipped pad1d kernel pads the last dimension only (issue 12)" % (list(pad),))
        if mode not in _PAD:
            _fail(op, "mode must be one of constant, reflect, replicate, circular, not %r" % (mode,))
        left, right = (int(p) for p in pad)
        if left < 0 or right < 0:
            _fail(op, "negative padding (cropping) is not done yet: %s" % (list(pad),))
        if not x.shape:
            _fail(op, "cannot pad a 0-D tensor")
        t_in = x.shape[-1]
        if mode != "constant":
            if value not in (None, 0):
                _fail(op, "Padding mode \"%s\" doesn't take in value argument." % mode)
            if len(x.shape) not in (2, 3):
                _fail(op, "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
            if mode == "reflect" and (left >= t_in or right >= t_in):
                _fail(op, "Argument #4: Padding size should be less than the corresponding input dimension, but "
                      "got: padding (%d, %d) at dimension %d of input %s" % (left, right, len(x.shape) - 1,
                                                                             list(x.shape)))
            if mode == "circular" and (left > t_in or right > t_in):
                _fail(op, "Padding value causes wrapping around more than once.")
            if t_in == 0:
                _fail(op, "cannot pad an empty dimension by %s" % mode)
        rows = x.size // t_in if t_in else 0
        t_out = t_in + left + right
        y = Tensor(self.ctx.buffer(_bytes(rows * t_out)), x.shape[:-1] + (t_out,), np.float32)
        for r0 in range(0, rows, 65535):  # the grid's y holds the rows
            n = min(65535, rows - r0)
            xs = x if n == rows else self.ctx.tensor(x.numpy().reshape(rows, t_in)[r0:r0 + n])
            ys = y if n == rows else Tensor(self.ctx.buffer(_bytes(n * t_out)), (n, t_out), np.float32)
            self._kernel(op, "pad1d").launch(n, t_in, left, right, _PAD[mode], float(value or 0), xs, ys)
            if ys is not y:
                y.buffer.write(ys.numpy(), offset=4 * r0 * t_out)
        return y

    # ---- resampling (kernels/interp1d.kc) -------------------------------------------------------------------

    def interpolate(self, input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                    recompute_scale_factor=None, antialias=False):
        """torch.nn.functional.interpolate of (N, C, L) input: nearest or linear."""
        op = "interpolate"
        x = self._tensor(op, "input", input)
        if len(x.shape) != 3:
            _fail(op, "Input Error: Only 3D input Tensors are supported here (got %dD) for the modes: nearest | "
                  "linear (2-D and 3-D resampling: issue 12)" % len(x.shape))
        if mode not in ("nearest", "linear"):
            _fail(op, "mode=%r: the shipped interp1d kernel does nearest and linear (got 3D input)" % (mode,))
        if antialias:
            _fail(op, "Anti-alias option is only supported for bilinear and bicubic modes")
        if mode == "nearest" and align_corners is not None:
            _fail(op, "align_corners option can only be set with the interpolating modes: linear | bilinear | "
                  "bicubic | trilinear")
        if (size is None) == (scale_factor is None):
            _fail(op, "either size or scale_factor should be defined" if size is None else
                  "only one of size or scale_factor should be defined")
        t_in = x.shape[2]
        factor = None
        if size is not None:
            size = size[0] if isinstance(size, (tuple, list)) and len(size) == 1 else size
            if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0:
                _fail(op, "size must be a positive integer or a 1-tuple of one, not %r" % (size,))
            t_out = int(size)
        else:
            factor = scale_factor[0] if isinstance(scale_factor, (tuple, list)) and len(scale_factor) == 1 \
                else scale_factor
            if not isinstance(factor, (int, float, np.number)) or isinstance(factor, bool) or factor <= 0:
                _fail(op, "scale_factor must be a positive number or a 1-tuple of one, not %r" % (scale_factor,))
            t_out = int(np.floor(float(t_in) * float(factor)))
            if recompute_scale_factor:
                factor = None
        if t_out <= 0 or t_in <= 0:
            _fail(op, "Input and output sizes should be greater than 0, but got input (L: %d) output (L: %d)" % (
                t_in, t_out))
        align = bool(align_corners) and mode == "linear"
        if align:  # PyTorch's area_pixel_compute_scale, in float
            scale = np.float32(t_in - 1) / np.float32(t_out - 1) if t_out > 1 else np.float32(0)
        elif factor is not None:  # compute_scales_value: 1 / scale_factor, rounded to float
            scale = np.float32(1.0 / float(factor))
        else:
            scale = np.float32(t_in) / np.float32(t_out)
        rows = x.shape[0] * x.shape[1]
        y = Tensor(self.ctx.buffer(_bytes(rows * t_out)), x.shape[:2] + (t_out,), np.float32)
        k = self._kernel(op, "interp1d")
        for r0 in range(0, rows, 65535):  # the grid's y holds the rows
            n = min(65535, rows - r0)
            xs = x if n == rows else self.ctx.tensor(x.numpy().reshape(rows, t_in)[r0:r0 + n])
            ys = y if n == rows else Tensor(self.ctx.buffer(_bytes(n * t_out)), (n, t_out), np.float32)
            k.launch(n, t_in, t_out, 0 if mode == "nearest" else 1, int(align), float(scale), xs, ys)
            if ys is not y:
                y.buffer.write(ys.numpy(), offset=4 * r0 * t_out)
        return y

    # ---- attention (kernels/attention.kc) ----------------------------------------------------------------

    def scaled_dot_product_attention(self, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                     scale=None):
        """torch.nn.functional.scaled_dot_product_attention (PyTorch 2.1's
        signature) for inference: (..., L, E), (..., S, E), (..., S, Ev) ->
        (..., L, Ev), one pass, the L x S scores never stored."""
        op = "scaled_dot_product_attention"
        half = _dtype_of(query) == np.float16
        if half and (_dtype_of(key) != np.float16 or _dtype_of(value) != np.float16):
            _fail(op, "Expected query, key, and value to have the same dtype, but got query.dtype: Half key.dtype: "
                  "%s and value.dtype: %s instead." % (_torch_name(_dtype_of(key) or np.float32),
                                                       _torch_name(_dtype_of(value) or np.float32)))
        q = self._operand(op, "query", query, None, half)
        k = self._operand(op, "key", key, None, half)
        v = self._operand(op, "value", value, None, half)
        if min(len(q.shape), len(k.shape), len(v.shape)) < 2:
            _fail(op, "expected query, key and value with at least 2 dimensions (..., L, E)")
        lead = tuple(q.shape[:-2])
        if tuple(k.shape[:-2]) != lead or tuple(v.shape[:-2]) != lead:
            _fail(op, "query %s, key %s and value %s must have the same batch dimensions (broadcasting them is "
                  "not done yet)" % (list(q.shape), list(k.shape), list(v.shape)))
        lq, d = q.shape[-2], q.shape[-1]
        lk, dv = k.shape[-2], v.shape[-1]
        if k.shape[-1] != d:
            _fail(op, "query and key must have the same embedding size, got %d and %d" % (d, k.shape[-1]))
        if v.shape[-2] != lk:
            _fail(op, "key and value must have the same sequence length, got %d and %d" % (lk, v.shape[-2]))
        if not 1 <= d <= 128 or not 1 <= dv <= 128:
            _fail(op, "head sizes up to 128 only (the shipped kernel keeps a row in registers): E=%d, Ev=%d" % (d, dv))
        if dropout_p:
            _fail(op, "dropout_p=%r: kcrt.nn runs inference; dropout is not applied" % (dropout_p,))
        if is_causal and attn_mask is not None:
            _fail(op, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        bh = math.prod(lead)
        mode, mask = 0, self._zeros(1)
        if attn_mask is not None:
            m = attn_mask.numpy() if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
            if m.dtype == np.bool_:
                m = np.where(m, np.float32(0), np.float32(-np.inf))
            elif m.dtype != (np.float16 if half else np.float32):
                _fail(op, "Expected attn_mask dtype to be bool or %s (the query's), but got %s"
                      % ("float16" if half else "float32", _torch_name(m.dtype)))
            m = m.astype(np.float32)  # the kernels add it to float scores
            try:
                full = np.broadcast_shapes(m.shape, lead + (lq, lk))
            except ValueError:
                full = None
            if full != lead + (lq, lk):
                _fail(op, "attn_mask of shape %s does not broadcast to %s" % (list(m.shape), list(lead + (lq, lk))))
            if all(s == 1 for s in m.shape[:-2]):
                mode, mask = 1, self.ctx.tensor(np.ascontiguousarray(np.broadcast_to(m.reshape(m.shape[-2:]),
                                                                                      (lq, lk))))
            else:
                mode, mask = 2, self.ctx.tensor(np.ascontiguousarray(np.broadcast_to(m, lead + (lq, lk))))
        scale = 1.0 / np.sqrt(d) if scale is None else float(scale)
        args = (bh, lq, lk, d, dv, float(np.float32(scale)), mode, int(bool(is_causal)), q, k, v, mask)
        # a few query rows (a GPT's decode step): a workgroup per row, its threads splitting the keys
        # (attention_decode); more: a thread per row, K/V tiles shared by the rows (attention). Measured
        # on lavapipe at 16 heads x 400 keys, the two cross between 4 and 8 rows (docs/kernels.md).
        kernel = "attention_decode" if lq <= _DECODE_ROWS else "attention"
        if half:
            y = self._half_out(lead + (lq, dv))
            if bh and lq:
                self._launch_f16(op, kernel + "_f16", *args, y)
            return y
        y = Tensor(self.ctx.buffer(_bytes(bh * lq * dv)), lead + (lq, dv), np.float32)
        if bh and lq:
            self._kernel(op, kernel).launch(*args, y)
        return y

    # ---- audio front end (kernels/stft.kc, gemm.kc) -----------------------------------------------------

    def spectrogram(self, waveform, pad=0, window=None, n_fft=400, hop_length=None, win_length=None, power=2.0,
                    normalized=False, center=True, pad_mode="reflect", onesided=True, return_complex=None):
        """torchaudio.functional.spectrogram (its positional order; defaults
        as torchaudio.transforms.Spectrogram): (..., time) -> (..., freq,
        frames). power=None gives the complex STFT as a float tensor with a
        last dimension of 2 (re, im), as torch.view_as_real would."""
        op = "spectrogram"
        x = self._tensor(op, "waveform", waveform)
        if not x.shape:
            _fail(op, "expected a waveform of shape (..., time), got a 0-D tensor")
        n_fft = _positive(op, "n_fft", n_fft)
        win_length = n_fft if win_length is None else _positive(op, "win_length", win_length)
        hop_length = win_length // 2 if hop_length is None else _positive(op, "hop_length", hop_length)
        if hop_length < 1:
            _fail(op, "expected hop_length > 0, but got hop_length=%d" % hop_length)
        if win_length > n_fft:
            _fail(op, "expected 0 < win_length <= n_fft, but got win_length=%d" % win_length)
        if n_fft > _STFT_NMAX or not _stft_size_ok(n_fft):
            _fail(op, "n_fft=%d: the shipped stft kernel takes sizes up to %d made of the factors 2, 3, 5 and 7 "
                  "(a mixed-radix FFT)" % (n_fft, _STFT_NMAX))
        if power is not None and float(power) not in (1.0, 2.0):
            _fail(op, "power=%r: the shipped kernel gives magnitudes (1.0), power (2.0) or the complex STFT "
                  "(None)" % (power,))
        if pad_mode not in ("reflect", "constant", "replicate"):
            _fail(op, "pad_mode=%r: expected 'reflect', 'constant' or 'replicate'" % (pad_mode,))
        w = self._window(op, window, win_length, n_fft, normalized)
        if pad:
            x = self.pad(x, (int(pad), int(pad)), "constant")
        length = x.shape[-1]
        half = n_fft // 2 if center else 0
        if center and pad_mode == "reflect" and half >= length:
            _fail(op, "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                  "padding (%d, %d) at dimension %d of input %s" % (half, half, len(x.shape), [1, 1, length]))
        if length + 2 * half < n_fft:
            _fail(op, "Input is too short: %d samples%s, n_fft %d" % (length, " after centring" if center else "",
                                                                      n_fft))
        batch = x.size // length
        frames = 1 + (length + 2 * half - n_fft) // hop_length
        nbins = n_fft // 2 + 1 if onesided in (None, True) else n_fft
        width = 2 if power is None else 1
        lead = tuple(x.shape[:-1])
        shape = lead + (nbins, frames) + ((2,) if width == 2 else ())
        y = Tensor(self.ctx.buffer(_bytes(batch * nbins * frames * width)), shape, np.float32)
        self._kernel(op, "stft").launch(batch, length, n_fft, hop_length, frames, nbins,
                                        {"constant": 0, "reflect": 1, "replicate": 2}[pad_mode], int(bool(center)),
                                        width, 0 if power is None else int(power), x, w, self._twiddles(n_fft), y)
        return y

    def mel_spectrogram(self, waveform, sample_rate=16000, n_fft=400, win_length=None, hop_length=None, f_min=0.0,
                        f_max=None, pad=0, n_mels=128, window=None, power=2.0, normalized=False, center=True,
                        pad_mode="reflect", onesided=None, norm=None, mel_scale="htk"):
        """torchaudio.transforms.MelSpectrogram(...)(waveform) in one call:
        the spectrogram, then torchaudio's triangular filterbank
        (melscale_fbanks: htk or slaney scale, norm None or 'slaney')
        applied with the gemm kernel. (..., time) -> (..., n_mels, frames)."""
        op = "mel_spectrogram"
        if power is None:
            _fail(op, "power=None: a mel spectrogram needs magnitudes or power (1.0 or 2.0)")
        if mel_scale not in ("htk", "slaney"):
            _fail(op, 'mel_scale should be one of "htk" or "slaney".')
        if norm not in (None, "slaney"):
            _fail(op, 'norm must be one of None or "slaney"')
        f_max = float(f_max) if f_max is not None else float(sample_rate // 2)
        if f_min > f_max:
            _fail(op, "Require f_min: %s <= f_max: %s" % (f_min, f_max))
        spec = self.spectrogram(waveform, pad, window, n_fft, hop_length, win_length, power, normalized, center,
                                pad_mode, onesided if onesided is not None else True)
        nbins, frames = spec.shape[-2], spec.shape[-1]
        fb_t = self._melbank(n_fft // 2 + 1 if onesided in (None, True) else n_fft, float(f_min), f_max,
                             int(n_mels), int(sample_rate), norm, mel_scale)
        if nbins != fb_t.shape[1]:
            _fail(op, "onesided=False: the mel filterbank covers the one-sided bins only")
        lead = tuple(spec.shape[:-2])
        gemm = self._kernel(op, "gemm")
        zeros = self._zeros(frames)
        outs = []
        for s in self._rows(spec, 2):  # (n_mels x F) (F x frames) per item
            y = Tensor(self.ctx.buffer(_bytes(n_mels * frames)), (n_mels, frames), np.float32)
            gemm.launch(n_mels, frames, nbins, False, 0, 0.0, fb_t, s, zeros, y)
            outs.append(y)
        return self._stack(outs, lead + (n_mels, frames))

    def resample(self, waveform, orig_freq, new_freq, lowpass_filter_width=6, rolloff=0.99,
                 resampling_method="sinc_interp_hann", beta=None):
        """torchaudio.functional.resample: (..., time) from orig_freq to
        new_freq with a windowed sinc (Hann, or Kaiser with beta), torchaudio's
        filter (made on the host in double, as torchaudio makes it) applied
        by the resample kernel. 'sinc_interpolation' and
        'kaiser_window' (torchaudio 0.13's names) are accepted too."""
        op = "resample"
        x = self._tensor(op, "waveform", waveform)
        if not x.shape:
            _fail(op, "expected a waveform of shape (..., time), got a 0-D tensor")
        for name, f in (("orig_freq", orig_freq), ("new_freq", new_freq)):
            if isinstance(f, bool) or f <= 0 or int(f) != f:
                _fail(op, "Original frequency and desired frequecy should be positive (%s=%r, an integer)" % (name, f))
        method = {"sinc_interpolation": "sinc_interp_hann", "kaiser_window": "sinc_interp_kaiser"}.get(
            resampling_method, resampling_method)
        if method not in ("sinc_interp_hann", "sinc_interp_kaiser"):
            _fail(op, "Invalid resampling method: %s" % resampling_method)
        if lowpass_filter_width <= 0:
            _fail(op, "Low pass filter width should be positive.")
        orig, new = int(orig_freq), int(new_freq)
        if orig == new:
            return x
        g = math.gcd(orig, new)
        orig, new = orig // g, new // g
        h, width = _sinc_resample_kernel(orig, new, lowpass_filter_width, rolloff, method, beta)
        taps = h.shape[1]
        length = x.shape[-1]
        batch = x.size // length if length else 0
        t_out = -(-new * length // orig)
        y = Tensor(self.ctx.buffer(_bytes(batch * t_out)), tuple(x.shape[:-1]) + (t_out,), np.float32)
        if batch and t_out:
            key = ("rs", orig, new, lowpass_filter_width, rolloff, method, beta)
            if key not in self._kernels:
                self._kernels[key] = self.ctx.tensor(h.reshape(-1))
            self._kernel(op, "resample").launch(batch, length, t_out, orig, new, width, taps, x,
                                                self._kernels[key], y)
        return y

    def sine_source(self, f0, upp, sampling_rate, harmonic_num=0, sine_amp=0.1, noise_std=0.003,
                    voiced_threshold=0, rand_ini=None, noise=None, generator=None):
        """RVC's SineGen(sampling_rate, harmonic_num, sine_amp, noise_std,
        voiced_threshold)(f0, upp): f0 (batch, frames) in Hz -> (sine_waves
        (batch, frames upp, harmonic_num + 1), uv (batch, frames upp, 1),
        noise (same as sine_waves)). Its random draws (the initial phases of
        the harmonics, torch.rand; the noise, torch.randn) come from
        `generator` (a numpy Generator; a fresh one by default), or are given
        as rand_ini (batch, harmonic_num + 1) and noise (batch, frames upp,
        harmonic_num + 1) to reproduce a torch run exactly."""
        op = "sine_source"
        f0 = self._host(op, "f0", f0, (2,))
        if isinstance(upp, bool) or int(upp) != upp or not 1 <= upp < 4096:
            _fail(op, "upp must be an integer in 1..4095 (the upsampling factor), not %r" % (upp,))
        upp, dim = int(upp), int(harmonic_num) + 1
        batch, frames = f0.shape
        f0_buf = f0[:, :, None] * np.arange(1, dim + 1, dtype=np.float32)  # float32, as RVC's torch code
        rad = np.remainder(f0_buf / np.float32(sampling_rate), np.float32(1)).astype(np.float32)
        rng = generator if generator is not None else np.random.default_rng()
        if rand_ini is None:
            rand_ini = rng.random((batch, dim), dtype=np.float32)
        rand_ini = np.array(rand_ini, np.float32).reshape(batch, dim)
        rand_ini[:, 0] = 0
        if frames:
            rad[:, 0, :] += rand_ini
        uvf = (f0 > np.float32(voiced_threshold)).astype(np.float32)
        t_out = frames * upp
        if noise is None:
            noise = rng.standard_normal((batch, t_out, dim), dtype=np.float32)
        noise = self._tensor(op, "noise", noise if isinstance(noise, Tensor) else np.asarray(noise, np.float32))
        if tuple(noise.shape) != (batch, t_out, dim):
            _fail(op, "noise must be of shape %s, not %s" % ([batch, t_out, dim], list(noise.shape)))
        n = batch * t_out * dim
        sine = Tensor(self.ctx.buffer(_bytes(n)), (batch, t_out, dim), np.float32)
        nz = Tensor(self.ctx.buffer(_bytes(n)), (batch, t_out, dim), np.float32)
        uv = Tensor(self.ctx.buffer(_bytes(batch * t_out)), (batch, t_out, 1), np.float32)
        if n:
            self._kernel(op, "sine_source").launch(batch, frames, upp, dim, float(np.float32(sine_amp)),
                                                   float(np.float32(noise_std)), self.ctx.tensor(rad),
                                                   self.ctx.tensor(uvf), noise, sine, nz, uv)
        return sine, uv, nz

    def yin(self, waveform, sample_rate, frame_length=1024, hop_length=None, fmin=50.0, fmax=1100.0, threshold=0.1,
            center=True):
        """YIN pitch (de Cheveigné & Kawahara 2002) of (..., time) -> (f0
        (..., frames) in Hz, aperiodicity (..., frames)): frames of
        frame_length (centred like torch.stft, zero-padded), lags from
        sample_rate / fmax to sample_rate / fmin (at most frame_length / 2),
        the first dip under `threshold` of the cumulative-mean-normalised
        difference (else its global minimum), refined by a parabola. A
        frame is voiced where the aperiodicity is under your threshold
        (aubio's confidence is 1 minus it)."""
        op = "yin"
        x = self._tensor(op, "waveform", waveform)
        if not x.shape:
            _fail(op, "expected a waveform of shape (..., time), got a 0-D tensor")
        frame_length = _positive(op, "frame_length", frame_length)
        if frame_length % 8 or frame_length > 2048 or frame_length < 16:
            _fail(op, "frame_length=%d: the shipped yin kernel takes multiples of 8 from 16 to 2048" % frame_length)
        hop = frame_length // 4 if hop_length is None else _positive(op, "hop_length", hop_length)
        if not 0 < fmin < fmax:
            _fail(op, "expected 0 < fmin < fmax, got fmin=%r, fmax=%r" % (fmin, fmax))
        tau_max = int(math.ceil(sample_rate / fmin))
        if tau_max > frame_length // 2:
            _fail(op, "fmin=%r needs lags up to %d: more than frame_length / 2 = %d (raise fmin or frame_length)"
                  % (fmin, tau_max, frame_length // 2))
        tau_max += (frame_length - tau_max) % 4  # the window W = frame_length - tau_max in steps of 4
        tau_min = max(1, int(sample_rate // fmax))
        if tau_min >= tau_max:
            _fail(op, "fmax=%r: no lag between sample_rate / fmax and sample_rate / fmin" % (fmax,))
        length = x.shape[-1]
        if not center and length < frame_length:
            _fail(op, "Input is too short: %d samples, frame_length %d" % (length, frame_length))
        batch = x.size // length if length else 0
        frames = 1 + (length if center else length - frame_length) // hop
        lead = tuple(x.shape[:-1])
        f0 = Tensor(self.ctx.buffer(_bytes(batch * frames)), lead + (frames,), np.float32)
        ap = Tensor(self.ctx.buffer(_bytes(batch * frames)), lead + (frames,), np.float32)
        if batch:
            self._kernel(op, "yin").launch(batch, length, frame_length, hop, frames, int(bool(center)), tau_min,
                                           tau_max, float(threshold), float(sample_rate), x, f0, ap)
        return f0, ap

    def _window(self, op, window, win_length, n_fft, normalized):
        """The window as the kernel takes it: n_fft long with a shorter one
        centred (torch.stft), any normalisation folded in."""
        if window is None:
            n = np.arange(win_length, dtype=np.float64)
            w = 0.5 - 0.5 * np.cos(2 * np.pi * n / win_length)  # torch.hann_window (periodic)
            if win_length == 1:
                w = np.ones(1)  # as torch's: a window of one sample is [1]
        else:
            w = window.numpy() if isinstance(window, Tensor) else np.asarray(window)
            if w.dtype != np.float32:
                _fail(op, "expected scalar type Float but found %s for argument 'window'" % _torch_name(w.dtype))
            if w.shape != (win_length,):
                _fail(op, "expected a 1D window tensor of size equal to win_length=%d, but got window with size %s"
                      % (win_length, list(w.shape)))
            w = w.astype(np.float64)
        if normalized is True or normalized == "window":
            w = w / np.sqrt(np.sum(w * w))
        elif normalized == "frame_length":
            w = w / np.sqrt(n_fft)
        elif normalized not in (False, None):
            _fail(op, "normalized must be a bool, 'window' or 'frame_length', not %r" % (normalized,))
        full = np.zeros(n_fft, np.float64)
        left = (n_fft - win_length) // 2
        full[left:left + win_length] = w
        return self.ctx.tensor(full.astype(np.float32))

    def _twiddles(self, n):
        key = ("tw", n)
        if key not in self._kernels:  # exp(-2 pi i k / n), computed in double, rounded once
            k = np.arange(n, dtype=np.float64)
            tw = np.stack([np.cos(2 * np.pi * k / n), -np.sin(2 * np.pi * k / n)], axis=-1)
            self._kernels[key] = self.ctx.tensor(tw.astype(np.float32).reshape(-1))
        return self._kernels[key]

    def _melbank(self, n_freqs, f_min, f_max, n_mels, sample_rate, norm, mel_scale):
        """torchaudio.functional.melscale_fbanks, transposed (n_mels x
        n_freqs) for the gemm, on the device; its formulas transcribed."""
        key = ("mel", n_freqs, f_min, f_max, n_mels, sample_rate, norm, mel_scale)
        if key not in self._kernels:
            fb = melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm, mel_scale)
            self._kernels[key] = self.ctx.tensor(np.ascontiguousarray(fb.T))
        return self._kernels[key]

    # ---- helpers ----------------------------------------------------------------------------------------

    def _bias(self, op, bias, n):
        if bias is None:
            return self._zeros(n)
        b = self._tensor(op, "bias", bias, (1,))
        if b.shape != (n,):
            _fail(op, "expected bias of size [%d], but got bias of size %s" % (n, list(b.shape)))
        return b

    def _affine(self, op, name, t, shape, fill):
        if t is None:
            return self.ctx.tensor(np.full(shape, fill, np.float32))
        a = self._tensor(op, name, t)
        if tuple(a.shape) != tuple(shape):
            _fail(op, "expected %s of size %s, but got %s of size %s" % (name, list(shape), name, list(a.shape)))
        return a

    def _stack(self, outs, shape):
        """Equally shaped tensors one after another, as one of `shape`: the
        items copied into place on the device."""
        if len(outs) == 1:
            return Tensor(outs[0].buffer, shape, outs[0].dtype)
        size = math.prod(outs[0].shape) * outs[0].dtype.itemsize
        buf = self.ctx.buffer(max(16, (size * len(outs) + 15) // 16 * 16))
        for i, o in enumerate(outs):
            buf.copy_from(o.buffer, size, offset=i * size)
        return Tensor(buf, shape, outs[0].dtype)


_STFT_NMAX = 2048  # kernels/stft.kc's shared transform buffer


def _stft_size_ok(n):
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
    return n == 1


def _positive(op, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
        _fail(op, "%s must be a positive integer, not %r" % (name, v))
    return int(v)


def _hz_to_mel(f, scale):
    if scale == "htk":
        return 2595.0 * np.log10(1.0 + f / 700.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    f = np.asarray(f, np.float64)
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, f / f_sp)


def _mel_to_hz(m, scale):
    if scale == "htk":
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm=None, mel_scale="htk"):
    """torchaudio.functional.melscale_fbanks (n_freqs x n_mels, float32):
    triangles between mel-spaced points, in float64 then rounded."""
    all_freqs = np.linspace(0, sample_rate // 2, n_freqs)
    m_pts = np.linspace(_hz_to_mel(f_min, mel_scale), _hz_to_mel(f_max, mel_scale), n_mels + 2)
    f_pts = _mel_to_hz(m_pts, mel_scale)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = np.maximum(0.0, np.minimum(down, up))
    if norm == "slaney":
        fb *= (2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels]))[None, :]
    return fb.astype(np.float32)


def _sinc_resample_kernel(orig, new, lowpass_filter_width, rolloff, method, beta):
    """torchaudio's _get_sinc_resample_kernel (new x taps, float32) and its
    width: a windowed sinc per output phase, computed in float64."""
    base = min(orig, new) * rolloff
    width = math.ceil(lowpass_filter_width * orig / base)
    idx = np.arange(-width, width + orig, dtype=np.float64)[None, :] / orig
    t = (np.arange(0, -new, -1, dtype=np.float32)[:, None] / np.float32(new)).astype(np.float64) + idx
    t = np.clip(t * base, -lowpass_filter_width, lowpass_filter_width)
    if method == "sinc_interp_hann":
        window = np.cos(t * math.pi / lowpass_filter_width / 2) ** 2
    else:
        beta = 14.769656459379492 if beta is None else float(beta)
        window = np.i0(beta * np.sqrt(1 - (t / lowpass_filter_width) ** 2)) / np.i0(beta)
    t = t * math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        kern = np.where(t == 0, 1.0, np.sin(t) / t)
    return (kern * window * (base / orig)).astype(np.float32), width


def _dtype_of(v):
    if isinstance(v, Tensor):
        return np.dtype(v.dtype)
    return v.dtype if isinstance(v, np.ndarray) else None


def _torch_name(dtype):
    return {"float64": "Double", "float16": "Half", "int32": "Int", "int64": "Long", "uint8": "Byte",
            "bool": "Bool"}.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _bytes(n):
    return max(16, (4 * int(n) + 15) // 16 * 16)  # float4 views (gemm, gemv) read whole 16 bytes


def _one(op, name, v):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            _fail(op, "expected %s to be a single integer value or a list of 1 values to match the convolution "
                  "dimensions, but got %s=%s" % (name, name, list(v)))
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 or (v == 0 and name in ("stride", "dilation")):
        _fail(op, "%s must be a %s integer, not %r" % (name, "positive" if name in ("stride", "dilation") else
                                                        "non-negative", v))
    return int(v)


def _pair(op, name, v, zero_ok=False):
    """An int or a pair of ints, as torch's conv2d takes stride, padding and dilation."""
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(vs) != 2:
        _fail(op, "expected %s to be a single integer value or a list of 2 values to match the convolution "
              "dimensions, but got %s=%s" % (name, name, list(vs)))
    for e in vs:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 0 or (e == 0 and not zero_ok):
            _fail(op, "%s must be %s integers, not %r" % (name, "non-negative" if zero_ok else "positive", v))
    return int(vs[0]), int(vs[1])


def _padding(op, padding, dilation, ks):
    if padding == "valid":
        return 0
    if padding == "same":
        total = dilation * (ks - 1)
        if total % 2:
            _fail(op, "padding='same' with an even total padding only (dilation * (kernel_size - 1) = %d): the "
                  "shipped kernel pads both sides alike" % total)
        return total // 2
    return _one(op, "padding", padding)


# ---- module-level: the default context and $KCRT_BUNDLE ------------------------------------------------------

_ops = None


def _bundle_candidates():
    """$KCRT_BUNDLE, else the rvc bundle installed beside the libkcrt this
    process loaded (PREFIX/share/kc/rvc.kcb), in this Python's prefix, or
    in the build tree the package came from."""
    import sys

    from . import _lib
    env = os.environ.get("KCRT_BUNDLE")
    if env:
        return [env]
    out = [os.path.join(os.path.dirname(os.path.realpath(_lib.path)), os.pardir, "share", "kc", "rvc.kcb"),
           os.path.join(sys.prefix, "share", "kc", "rvc.kcb")]
    try:
        from . import _where
        out.append(os.path.join(_where.BUILD_TREE, "share", "kc", "rvc.kcb"))
    except ImportError:
        pass
    return out


def default_ops():
    """Ops over kcrt.default_context() and the default bundle ($KCRT_BUNDLE,
    else the installed share/kc/rvc.kcb)."""
    global _ops
    ctx = default_context()
    if _ops is None or _ops.ctx is not ctx:
        tried = _bundle_candidates()
        path = next((p for p in tried if os.path.isfile(p)), None)
        if not path:
            raise Error("kcrt.nn: no bundle: set KCRT_BUNDLE to a bundle of kc's kernels/ (kc build kernels/ -o "
                        "rvc.kcb), or install kc (share/kc/rvc.kcb); tried " + ", ".join(tried))
        _ops = Ops(ctx.load(path))
    return _ops


def conv1d(*args, **kwargs):
    return default_ops().conv1d(*args, **kwargs)


def conv_transpose1d(*args, **kwargs):
    return default_ops().conv_transpose1d(*args, **kwargs)


def linear(*args, **kwargs):
    return default_ops().linear(*args, **kwargs)


def layer_norm(*args, **kwargs):
    return default_ops().layer_norm(*args, **kwargs)


def softmax(*args, **kwargs):
    return default_ops().softmax(*args, **kwargs)


def relu(*args, **kwargs):
    return default_ops().relu(*args, **kwargs)


def leaky_relu(*args, **kwargs):
    return default_ops().leaky_relu(*args, **kwargs)


def sigmoid(*args, **kwargs):
    return default_ops().sigmoid(*args, **kwargs)


def tanh(*args, **kwargs):
    return default_ops().tanh(*args, **kwargs)


def silu(*args, **kwargs):
    return default_ops().silu(*args, **kwargs)


def gelu(*args, **kwargs):
    return default_ops().gelu(*args, **kwargs)


def matmul(*args, **kwargs):
    return default_ops().matmul(*args, **kwargs)


def bmm(*args, **kwargs):
    return default_ops().bmm(*args, **kwargs)


def log(*args, **kwargs):
    return default_ops().log(*args, **kwargs)


def exp(*args, **kwargs):
    return default_ops().exp(*args, **kwargs)


def clamp(*args, **kwargs):
    return default_ops().clamp(*args, **kwargs)


def add(*args, **kwargs):
    return default_ops().add(*args, **kwargs)


def mul(*args, **kwargs):
    return default_ops().mul(*args, **kwargs)


def pad(*args, **kwargs):
    return default_ops().pad(*args, **kwargs)


def interpolate(*args, **kwargs):
    return default_ops().interpolate(*args, **kwargs)


def log_softmax(*args, **kwargs):
    return default_ops().log_softmax(*args, **kwargs)


def group_norm(*args, **kwargs):
    return default_ops().group_norm(*args, **kwargs)


def spectrogram(*args, **kwargs):
    return default_ops().spectrogram(*args, **kwargs)


def mel_spectrogram(*args, **kwargs):
    return default_ops().mel_spectrogram(*args, **kwargs)


def scaled_dot_product_attention(*args, **kwargs):
    return default_ops().scaled_dot_product_attention(*args, **kwargs)


def resample(*args, **kwargs):
    return default_ops().resample(*args, **kwargs)


def sine_source(*args, **kwargs):
    return default_ops().sine_source(*args, **kwargs)


def yin(*args, **kwargs):
    return default_ops().yin(*args, **kwargs)


def conv2d(*args, **kwargs):
    return default_ops().conv2d(*args, **kwargs)


def gru(*args, **kwargs):
    return default_ops().gru(*args, **kwargs)
