#!/usr/bin/env python3
"""refcheck.py -- proves the C references (reference.c) against numpy.

    /usr/bin/python3 tests/kernels/refcheck.py PATH/TO/refcheck [--seed S] [--verbose]

For every kernel it draws fresh random inputs (the seed is printed, so a
failure can be replayed with --seed) for several small shapes chosen *not*
to be multiples of any tile (odd sizes, 1s, a row of 1026), computes the
expected output with numpy in float64, runs the C reference through the
refcheck program on the same float32 inputs, and requires the relative L2
error |ref - numpy| / |numpy| to be under BOUND. Both sides accumulate in
double, so they differ by the final rounding to float32 (about 3e-8);
BOUND = 1e-6 is far below what any mistake of indexing, padding or
activation costs (1e-2 and up).

The numpy formulations are themselves checked where they are not a single
library call: conv1d (shifted matrix products) and conv_transpose1d
(strided scatter of per-tap products) against their direct definitions as
loops, conv_transpose1d also against the zero-stuffing identity (insert
stride - 1 zeros between samples, correlate with the flipped kernel), and
the tanh form of GELU against the exact one (math.erf).

Exits 77 (skipped) when numpy is missing: on this project's machines the
python3 on PATH may be a build without numpy; Debian's /usr/bin/python3
with python3-numpy has it.
"""
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("refcheck.py: numpy is not installed for %s; skipping" % sys.executable)
    sys.exit(77)

BOUND = 1e-6


def rel_l2(got, want):
    """|got - want| / |want|, but not relative to a norm below 1e-6 RMS (as
    test_kernels_device's): the C references round to float32, so an output
    far smaller (GELU's far negative tail, 1e-61) would compare as 0 against
    numpy's double and count as an error of 1."""
    want = np.asarray(want, np.float64).ravel()
    got = np.asarray(got, np.float64).ravel()
    norm = max(np.linalg.norm(want), 1e-6 * math.sqrt(want.size))
    return np.linalg.norm(got - want) / norm


# ---- numpy formulations ---------------------------------------------------------

def act_np(act, alpha, v):
    if act == 1:
        return np.maximum(v, 0.0)
    if act == 2:  # PyTorch's 0.5 v (1 + tanh(u)), written as v sigmoid(2 u): the same number without the
        # cancellation of 1 + tanh(u) for v << 0, which in double still costs 1e-5 relative at v = -12
        u = math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)
        return v / (1.0 + np.exp(-2.0 * u))
    if act == 3:
        return np.where(v >= 0, v, alpha * v)
    return v


def conv1d_np(x, w, b, dil, pad, slope):
    cin, t_in = x.shape
    cout, _, ks = w.shape
    t_out = t_in + 2 * pad - dil * (ks - 1)
    xp = np.zeros((cin, t_in + 2 * pad + dil * ks + 1))
    xp[:, pad:pad + t_in] = x
    y = np.tile(b[:, None].astype(np.float64), (1, t_out))
    for j in range(ks):
        y += w[:, :, j].astype(np.float64) @ xp[:, j * dil:j * dil + t_out]
    return np.where(y >= 0, y, slope * y)


def conv1d_direct(x, w, b, dil, pad, slope):
    cin, t_in = x.shape
    cout, _, ks = w.shape
    t_out = t_in + 2 * pad - dil * (ks - 1)
    y = np.zeros((cout, t_out))
    for o in range(cout):
        for t in range(t_out):
            s = float(b[o])
            for c in range(cin):
                for j in range(ks):
                    at = t + j * dil - pad
                    if 0 <= at < t_in:
                        s += float(w[o, c, j]) * float(x[c, at])
            y[o, t] = s if s >= 0 else slope * s
    return y


def convt_len(t_in, ks, stride, pad, out_pad):
    return (t_in - 1) * stride - 2 * pad + ks + out_pad


def convt_np(x, w, b, stride, pad, out_pad):
    cin, t_in = x.shape
    _, cout, ks = w.shape
    t_out = convt_len(t_in, ks, stride, pad, out_pad)
    full = np.zeros((cout, max((t_in - 1) * stride + ks, pad + t_out)))
    for j in range(ks):  # tap j of every input sample lands at s * stride + j
        full[:, j:j + (t_in - 1) * stride + 1:stride] += w[:, :, j].astype(np.float64).T @ x
    return full[:, pad:pad + t_out] + b[:, None]


def convt_direct(x, w, b, stride, pad, out_pad):
    cin, t_in = x.shape
    _, cout, ks = w.shape
    t_out = convt_len(t_in, ks, stride, pad, out_pad)
    y = np.zeros((cout, t_out))
    for o in range(cout):
        for t in range(t_out):
            s = float(b[o])
            for c in range(cin):
                for sample in range(t_in):
                    j = t + pad - sample * stride
                    if 0 <= j < ks:
                        s += float(x[c, sample]) * float(w[c, o, j])
            y[o, t] = s
    return y


def convt_zero_stuffed(x, w, b, stride, pad, out_pad):
    """The textbook identity: stuff stride - 1 zeros between samples, pad
    with ks - 1 - pad zeros, correlate with the flipped, transposed kernel."""
    cin, t_in = x.shape
    _, cout, ks = w.shape
    t_out = convt_len(t_in, ks, stride, pad, out_pad)
    stuffed = np.zeros((cin, (t_in - 1) * stride + 1))
    stuffed[:, ::stride] = x
    lead = ks - 1 - pad
    xp = np.zeros((cin, lead + stuffed.shape[1] + t_out + ks))
    xp[:, lead:lead + stuffed.shape[1]] = stuffed  # lead >= 0 for every case below
    wf = w[:, :, ::-1].transpose(1, 0, 2).astype(np.float64)  # cout x cin x ks
    y = np.tile(b[:, None].astype(np.float64), (1, t_out))
    for j in range(ks):
        y += wf[:, :, j] @ xp[:, j:j + t_out]
    return y


# ---- the cases ----------------------------------------------------------------

def f32(rng, *shape, scale=1.0, offset=0.0):
    return (rng.standard_normal(shape) * scale + offset).astype(np.float32)


_erf = np.vectorize(math.erf)


def elementwise_np(op, alpha, x, z):
    """elementwise.kc's ops, in float64, written from PyTorch's definitions.
    alpha is the kernel's float argument: its float32 value (x + alpha with
    x near -alpha cancels, and 0.3 - 0.3f would then show as an error)."""
    x, z = x.astype(np.float64), z.astype(np.float64)
    alpha = float(np.float32(alpha))
    sigmoid = 1.0 / (1.0 + np.exp(-x))
    with np.errstate(invalid="ignore", divide="ignore"):
        log = np.log(x)
    return [np.maximum(x, 0), np.where(x >= 0, x, alpha * x), sigmoid, np.tanh(x), x * sigmoid,
            0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))), act_np(2, 0.0, x), x + alpha * z, x * z, x + alpha,
            x * alpha, log, np.exp(x), np.where(x < alpha, alpha, x), np.where(x > alpha, alpha, x)][op] \
        if op <= 14 else x


def cases(rng):
    """(kernel, params, inputs, expected) for every kernel and shape."""
    for n in (1, 7, 1001, 4099):
        x, y = f32(rng, n), f32(rng, n)
        yield "saxpy", dict(n=n, a=-1.75), dict(x=x, y=y), -1.75 * x.astype(np.float64) + y

    for rows, t_in, left, right in ((1, 1, 0, 0), (1, 5, 4, 4), (3, 17, 1, 16), (2, 1024, 512, 511)):
        for mode, np_mode in enumerate(("constant", "reflect", "edge", "wrap")):
            if np_mode == "reflect" and max(left, right) >= t_in:
                continue  # PyTorch refuses it
            x = f32(rng, rows, t_in)
            kw = dict(constant_values=-2.5) if mode == 0 else {}
            want = np.pad(x.astype(np.float64), ((0, 0), (left, right)), mode=np_mode, **kw)
            params = dict(rows=rows, t_in=t_in, left=left, right=right, mode=mode, value=-2.5)
            yield "pad1d", params, dict(x=x), want

    for rows, t_in, t_out in ((1, 1, 1), (1, 1, 5), (2, 7, 3), (3, 10, 37), (1, 100, 4800), (2, 33, 33)):
        for mode, align in ((0, 0), (1, 0), (1, 1)):
            x = f32(rng, rows, t_in)
            if align:
                scale = np.float32((t_in - 1) / (t_out - 1)) if t_out > 1 else np.float32(0)
            else:
                scale = np.float32(t_in) / np.float32(t_out)
            t = np.arange(t_out, dtype=np.float32)
            if mode == 0:  # torch's nearest_idx, in float32
                idx = np.minimum(np.floor(t * scale).astype(np.int64), t_in - 1)
                want = x.astype(np.float64)[:, idx]
            else:  # torch's area_pixel_compute_source_index, in float32, then the blend
                s = scale * t if align else np.maximum(scale * (t + np.float32(0.5)) - np.float32(0.5), 0)
                i = np.minimum(s.astype(np.int64), t_in - 1)
                j = np.minimum(i + 1, t_in - 1)
                w = s.astype(np.float64) - i
                xd = x.astype(np.float64)
                want = (1 - w) * xd[:, i] + w * xd[:, j]
            params = dict(rows=rows, t_in=t_in, t_out=t_out, mode=mode, align_corners=align, scale=float(scale))
            yield "interp1d", params, dict(x=x), want

    # stft: numpy's pad (reflect/edge/constant) and rfft, the definitions
    # torch.stft is documented by (center pads n_fft // 2 each side)
    modes = {0: "constant", 1: "reflect", 2: "edge"}
    for batch, length, nfft, hop, center, pad_mode in ((1, 50, 16, 4, 1, 1), (2, 97, 12, 5, 1, 0), (1, 300, 105, 31, 1, 2),
                                                        (1, 401, 400, 160, 0, 1), (2, 1000, 64, 7, 1, 1)):
        x = f32(rng, batch, length)
        w = f32(rng, nfft)
        half = nfft // 2 if center else 0
        xp = np.pad(x.astype(np.float64), ((0, 0), (half, half)), mode=modes[pad_mode])
        frames = 1 + (xp.shape[1] - nfft) // hop
        idx = np.arange(frames)[:, None] * hop + np.arange(nfft)[None, :]
        spec = np.fft.rfft(xp[:, idx] * w.astype(np.float64), axis=-1)  # batch x frames x bins
        spec = np.transpose(spec, (0, 2, 1))  # batch x bins x frames, as torch
        nbins = spec.shape[1]
        for width, power in ((2, 0), (1, 1), (1, 2)):
            if width == 2:
                want = np.stack([spec.real, spec.imag], axis=-1)
            else:
                want = np.abs(spec) ** power
            params = dict(batch=batch, len=length, nfft=nfft, hop=hop, frames=frames, nbins=nbins,
                          pad_mode=pad_mode, center=center, width=width, power=power)
            yield "stft", params, dict(x=x, window=w), want

    # resample: torchaudio's recipe with numpy: pad, strided correlation
    # with each phase's filter, phases interleaved, cut to ceil(new len / orig)
    for batch, length, orig, new, width in ((1, 1, 1, 1, 1), (2, 50, 3, 1, 19), (1, 97, 5, 6, 7), (1, 300, 441, 160, 17),
                                            (3, 31, 2, 3, 4)):
        taps = 2 * width + orig
        x, h = f32(rng, batch, length), f32(rng, new, taps)
        t_out = -(-new * length // orig)
        xp = np.pad(x.astype(np.float64), ((0, 0), (width, width + orig)))
        frames = (xp.shape[1] - taps) // orig + 1
        idx = np.arange(frames)[:, None] * orig + np.arange(taps)[None, :]
        y = np.einsum("bfk,pk->bfp", xp[:, idx], h.astype(np.float64)).reshape(batch, -1)[:, :t_out]
        params = dict(batch=batch, len=length, t_out=t_out, orig=orig, new_rate=new, width=width, taps=taps)
        yield "resample", params, dict(x=x, h=h), y

    # sine_source: numpy's cumsum of the nearest-upsampled rad (np.repeat), mod 1, sin
    for batch, frames, upp, dim in ((1, 1, 1, 1), (2, 7, 40, 3), (1, 30, 1, 2), (1, 3, 4095, 1)):
        rad = np.abs(f32(rng, batch, frames, dim))
        uvf = (f32(rng, batch, frames) > 0).astype(np.float32)
        noise = f32(rng, batch, frames * upp, dim)
        phi = np.cumsum(np.repeat(rad.astype(np.float64), upp, axis=1), axis=1) % 1.0
        uvs = np.repeat(uvf.astype(np.float64), upp, axis=1)[:, :, None]
        # the kernel's noise_std and amp are float32: 0.003 as a double
        # differs by 9e-9 relative, which a voiced sample whose sine and
        # noise nearly cancel (0.1 sin(2 pi 0.0091) - 0.003 x 1.90 = 2.4e-5)
        # magnified to a relative error of 2e-6 (seed 266023046)
        namp = uvs * float(np.float32(0.003)) + (1 - uvs) * float(np.float32(0.1)) / 3
        want = np.float32(0.1) * np.sin(2 * np.pi * phi) * uvs + namp * noise
        params = dict(batch=batch, frames=frames, upp=upp, dim=dim, amp=float(np.float32(0.1)),
                      noise_std=float(np.float32(0.003)))
        yield "sine_source", params, dict(rad=rad, uvf=uvf, noise=noise), want

    # yin: de Cheveigne & Kawahara (2002) steps 2-5 with numpy, frame by frame
    def yin_np(x, sr, fl, hop, frames, center, tau_min, tau_max, thr):
        w = fl - tau_max
        xd = x.astype(np.float64)
        out_f0, out_ap = [], []
        for t in range(frames):
            start = t * hop - (fl // 2 if center else 0)
            idx = np.arange(start, start + fl)
            fr = np.where((idx >= 0) & (idx < len(xd)), xd[np.clip(idx, 0, len(xd) - 1)], 0.0)
            d = np.array([np.sum((fr[:w] - fr[tau:tau + w]) ** 2) for tau in range(tau_max + 1)])
            cum = np.cumsum(d[1:])
            dp = np.ones(tau_max + 1)
            dp[1:] = np.where(cum > 0, d[1:] * np.arange(1, tau_max + 1) / np.where(cum > 0, cum, 1), 1.0)
            below = np.nonzero(dp[tau_min:tau_max] < thr)[0]
            if len(below):
                tau = tau_min + below[0]
                while tau + 1 < tau_max and dp[tau + 1] < dp[tau]:
                    tau += 1
            else:
                tau = tau_min + int(np.argmin(dp[tau_min:tau_max]))
            shift = 0.0
            if tau > 1 and tau + 1 <= tau_max:
                a, m, c = dp[tau - 1], dp[tau], dp[tau + 1]
                if a - 2 * m + c > 0:
                    shift = min(max(0.5 * (a - c) / (a - 2 * m + c), -1.0), 1.0)
            out_f0.append(sr / (tau + shift))
            out_ap.append(dp[tau])
        return np.concatenate([out_f0, out_ap])

    for length, fl, hop, center, f in ((2000, 256, 64, 1, 220.0), (3001, 512, 160, 0, 97.0), (500, 64, 17, 1, 1000.0)):
        sr = 16000.0
        tt = np.arange(length) / sr
        x = (np.sin(2 * np.pi * f * tt) + 0.4 * np.sin(4 * np.pi * f * tt + 1) + 0.01 * rng.standard_normal(length))
        x = x.astype(np.float32)
        tau_max, tau_min = fl // 2, max(1, int(sr / 2000))
        frames = 1 + (length - (0 if center else fl)) // hop
        params = dict(batch=1, len=length, frame_length=fl, hop=hop, frames=frames, center=center, tau_min=tau_min,
                      tau_max=tau_max, threshold=0.1, sr=sr)
        yield "yin", params, dict(x=x), yin_np(x, sr, fl, hop, frames, center, tau_min, tau_max, 0.1)

    # conv2d: numpy's pad, strided/dilated patches and einsum per group
    for (bt, cin, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, g) in (
            (1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1), (2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1),
            (1, 4, 11, 6, 6, 3, 2, 2, 1, 0, 1, 1, 2, 2), (1, 6, 8, 8, 6, 3, 3, 1, 2, 2, 1, 2, 1, 6),
            (1, 8, 5, 13, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1)):
        x, wt, b = f32(rng, bt, cin, h, w), f32(rng, cout, cin // g, kh, kw), f32(rng, cout)
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        ri = (np.arange(oh) * sh)[:, None] + (np.arange(kh) * dh)[None, :]  # oh x kh rows
        ci = (np.arange(ow) * sw)[:, None] + (np.arange(kw) * dw)[None, :]  # ow x kw columns
        patches = xp[:, :, ri[:, None, :, None], ci[None, :, None, :]]      # n, cin, oh, ow, kh, kw
        want = np.zeros((bt, cout, oh, ow))
        cig, cog = cin // g, cout // g
        for gi in range(g):
            want[:, gi * cog:(gi + 1) * cog] = np.einsum("ncijpq,ocpq->noij", patches[:, gi * cig:(gi + 1) * cig],
                                                         wt[gi * cog:(gi + 1) * cog].astype(np.float64))
        want += b.astype(np.float64)[None, :, None, None]
        params = dict(batch=bt, cin=cin, h=h, w=w, cout=cout, kh=kh, kw=kw, oh=oh, ow=ow, sh=sh, sw=sw, ph=ph, pw=pw,
                      dh=dh, dw=dw, groups=g)
        yield "conv2d", params, dict(x=x, wt=wt, bias=b), want

    # gru_step: torch.nn.GRU's equations (its documentation) with numpy
    for batch, hidden, steps, t in ((1, 1, 1, 0), (2, 5, 3, 1), (3, 16, 4, 3), (1, 33, 2, 0)):
        gi, whh, bhh, h = f32(rng, steps, batch, 3 * hidden), f32(rng, 3 * hidden, hidden), f32(rng, 3 * hidden), \
            f32(rng, batch, hidden)
        hd = h.astype(np.float64)
        gh = hd @ whh.astype(np.float64).T + bhh.astype(np.float64)  # batch x 3 hidden
        g = gi[t].astype(np.float64)
        r = 1 / (1 + np.exp(-(g[:, :hidden] + gh[:, :hidden])))
        z = 1 / (1 + np.exp(-(g[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden])))
        n = np.tanh(g[:, 2 * hidden:] + r * gh[:, 2 * hidden:])
        params = dict(batch=batch, hidden=hidden, t=t, steps=steps)
        yield "gru_step", params, dict(gi=gi, whh=whh, bhh=bhh, h_in=h), (1 - z) * n + z * hd

    # gemm_f16: numpy's float16 values, a float64 matmul, one rounding to float16
    for (M, N, K, has_bias) in ((1, 1, 1, 0), (3, 5, 7, 1), (17, 33, 13, 1), (67, 130, 45, 0)):
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        bias = f32(rng, N)
        c = a.astype(np.float64) @ b.astype(np.float64) + (bias.astype(np.float64) if has_bias else 0.0)
        params = dict(M=M, N=N, K=K, has_bias=has_bias)
        yield "gemm_f16", params, dict(A=a.astype(np.float32), B=b.astype(np.float32), bias=bias), \
            c.astype(np.float16).astype(np.float64)

    # attention: softmax(scale q k^T + mask) v with numpy's matmul and exp
    for bh, lq, lk, d, dv, mm, causal in ((1, 1, 1, 1, 1, 0, 0), (2, 5, 7, 3, 4, 1, 0), (3, 9, 9, 8, 5, 0, 1),
                                          (2, 4, 11, 6, 6, 2, 1), (1, 17, 3, 64, 64, 1, 0)):
        q, k, v = f32(rng, bh, lq, d), f32(rng, bh, lk, d), f32(rng, bh, lk, dv)
        mask = f32(rng, bh, lq, lk) if mm == 2 else f32(rng, lq, lk) if mm == 1 else f32(rng, 1)
        scale = float(np.float32(1 / math.sqrt(d)))
        s = np.matmul(q.astype(np.float64), np.swapaxes(k.astype(np.float64), 1, 2)) * scale
        if mm:
            s = s + mask.astype(np.float64)
        if causal:
            s = np.where(np.arange(lk)[None, :] <= np.arange(lq)[:, None], s, -np.inf)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        want = np.matmul(e / e.sum(axis=-1, keepdims=True), v.astype(np.float64))
        params = dict(bh=bh, lq=lq, lk=lk, d=d, dv=dv, scale=scale, mask_mode=mm, causal=causal)
        yield "attention", params, dict(q=q, k=k, v=v, mask=mask), want

    for n in (1, 13, 1029):
        for op in range(16):  # 15: any other op, a copy
            x, z = f32(rng, n, scale=4.0), f32(rng, n)
            if op == 11:  # log: positive x (the L2 comparison takes no NaN; test_kernels_device checks them)
                x = (np.abs(x) + np.float32(1e-3)).astype(np.float32)
            yield "elementwise", dict(n=n, op=op, alpha=-0.3), dict(x=x, z=z), elementwise_np(op, -0.3, x, z)

    for (M, N, K) in ((1, 1, 1), (3, 5, 7), (17, 33, 13), (67, 130, 45), (5, 1026, 21), (31, 19, 259)):
        for has_bias, act in ((0, 0), (1, 0), (1, 1), (0, 2), (1, 2), (1, 3)):
            A, B, bias = f32(rng, M, K), f32(rng, K, N), f32(rng, N)
            want = A.astype(np.float64) @ B.astype(np.float64) + (bias if has_bias else 0.0)
            params = dict(M=M, N=N, K=K, has_bias=has_bias, act=act, alpha=0.2)
            yield "gemm", params, dict(A=A, B=B, bias=bias), act_np(act, 0.2, want)

    # bmm: numpy's batched matmul; a stride of 0 broadcasts that operand, as torch.matmul's batch dims do
    for (batch, M, N, K, bcast) in ((1, 1, 1, 1, ""), (3, 5, 7, 9, ""), (4, 17, 6, 33, "a"), (2, 9, 130, 5, "b"),
                                    (5, 1, 3, 2, "")):
        A = f32(rng, 1 if bcast == "a" else batch, M, K)
        B = f32(rng, 1 if bcast == "b" else batch, K, N)
        bias = f32(rng, N)
        want = np.matmul(A.astype(np.float64), B.astype(np.float64)) + bias
        params = dict(batch=batch, M=M, N=N, K=K, sa=0 if bcast == "a" else M * K, sb=0 if bcast == "b" else K * N,
                      has_bias=1, act=3, alpha=0.2)
        yield "bmm", params, dict(A=A, B=B, bias=bias), act_np(3, 0.2, np.broadcast_to(want, (batch, M, N)))

    for (N, K) in ((1, 1), (5, 3), (33, 130), (17, 1023), (70, 257)):
        for has_bias in (0, 1):
            W, x, bias = f32(rng, N, K), f32(rng, K), f32(rng, N)
            want = W.astype(np.float64) @ x.astype(np.float64) + (bias if has_bias else 0.0)
            yield "gemv", dict(N=N, K=K, has_bias=has_bias), dict(W=W, x=x, bias=bias), want

    for (rows, n) in ((1, 1), (3, 5), (13, 141), (7, 1000), (2, 33)):
        x = f32(rng, rows, n, scale=8.0)
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(axis=1, keepdims=True))
        yield "softmax", dict(rows=rows, n=n, log_out=0), dict(x=x), e / e.sum(axis=1, keepdims=True)
        shifted = x64 - x64.max(axis=1, keepdims=True)
        yield "softmax", dict(rows=rows, n=n, log_out=1), dict(x=x), shifted - np.log(
            np.exp(shifted).sum(axis=1, keepdims=True))
    x = np.array([[1000.0, 999.0, -1000.0, 0.0, 88.0]], np.float32)  # exp would overflow without max-subtract
    e = np.exp(x.astype(np.float64) - 1000.0)
    yield "softmax", dict(rows=1, n=5, log_out=0), dict(x=x), e / e.sum()

    for (rows, n) in ((1, 1), (3, 5), (13, 769), (5, 1001), (9, 33)):
        x = f32(rng, rows, n, scale=3.0, offset=100.0)  # a large mean: one-pass variance would cancel
        gamma, beta = f32(rng, n), f32(rng, n)
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=1, keepdims=True)
        var = x64.var(axis=1, keepdims=True)  # biased, as LayerNorm
        want = (x64 - mean) / np.sqrt(var + 1e-5) * gamma + beta
        yield "layernorm", dict(rows=rows, n=n, eps=1e-5), dict(x=x, gamma=gamma, beta=beta), want

    for (n, c, groups, sp) in ((1, 1, 1, 1), (2, 6, 3, 5), (1, 8, 8, 37), (3, 12, 4, 1), (2, 4, 1, 300)):
        x = f32(rng, n, c, sp, scale=3.0, offset=50.0)
        gamma, beta = f32(rng, c), f32(rng, c)
        g = x.astype(np.float64).reshape(n, groups, -1)
        z = ((g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + 1e-5)).reshape(n, c, sp)
        want = z * gamma[None, :, None] + beta[None, :, None]
        yield "group_norm", dict(n=n, c=c, groups=groups, s=sp, eps=1e-5), dict(x=x, gamma=gamma, beta=beta), want

    conv_shapes = ((1, 1, 1, 1, 1, 0, 1.0), (3, 5, 17, 3, 1, 1, 0.1), (13, 7, 50, 7, 3, 9, 0.1),
                   (6, 11, 100, 11, 5, 25, 1.0), (9, 9, 64, 3, 2, 0, 0.2), (5, 4, 30, 4, 1, 3, 0.1),
                   (2, 3, 9, 5, 2, 6, 0.3))
    for (cin, cout, t_in, ks, dil, pad, slope) in conv_shapes:
        x, w, bias = f32(rng, cin, t_in), f32(rng, cout, cin, ks), f32(rng, cout)
        want = conv1d_np(x, w, bias, dil, pad, slope)
        if cin * cout * ks * t_in <= 200000:
            direct = conv1d_direct(x, w, bias, dil, pad, slope)
            assert rel_l2(want, direct) < 1e-12, "conv1d: numpy formulation != definition"
        params = dict(cin=cin, cout=cout, t_in=t_in, ks=ks, dil=dil, pad=pad, slope=slope)
        yield "conv1d", params, dict(x=x, w=w, bias=bias), want

    convt_shapes = ((1, 1, 1, 1, 1, 0, 0), (3, 5, 7, 16, 10, 3, 0), (13, 6, 11, 16, 10, 3, 0),
                    (9, 17, 20, 4, 2, 1, 1), (5, 7, 9, 3, 5, 0, 0), (4, 3, 13, 7, 3, 4, 2),
                    (2, 3, 5, 5, 2, 2, 1))
    for (cin, cout, t_in, ks, stride, pad, out_pad) in convt_shapes:
        x, w, bias = f32(rng, cin, t_in), f32(rng, cin, cout, ks), f32(rng, cout)
        want = convt_np(x, w, bias, stride, pad, out_pad)
        direct = convt_direct(x, w, bias, stride, pad, out_pad)
        assert rel_l2(want, direct) < 1e-12, "conv_transpose1d: numpy formulation != definition"
        if out_pad == 0:  # the identity as written covers no output padding
            stuffed = convt_zero_stuffed(x, w, bias, stride, pad, out_pad)
            assert rel_l2(want, stuffed) < 1e-12, "conv_transpose1d: numpy formulation != zero stuffing"
        params = dict(cin=cin, cout=cout, t_in=t_in, ks=ks, stride=stride, pad=pad, out_pad=out_pad, groups=1)
        yield "conv_transpose1d", params, dict(x=x, w=w, bias=bias), want
    # groups: the dense formulation per group (its input channels, its outputs), concatenated
    for (cin, cout, t_in, ks, stride, pad, out_pad, groups) in ((6, 4, 9, 4, 2, 1, 0, 2), (5, 5, 8, 3, 3, 0, 1, 5),
                                                                 (3, 9, 7, 16, 10, 3, 0, 3)):
        cig, cog = cin // groups, cout // groups
        x, w, bias = f32(rng, cin, t_in), f32(rng, cin, cog, ks), f32(rng, cout)
        want = np.concatenate([convt_np(x[g * cig:(g + 1) * cig], w[g * cig:(g + 1) * cig],
                                        bias[g * cog:(g + 1) * cog], stride, pad, out_pad) for g in range(groups)])
        params = dict(cin=cin, cout=cout, t_in=t_in, ks=ks, stride=stride, pad=pad, out_pad=out_pad, groups=groups)
        yield "conv_transpose1d", params, dict(x=x, w=w, bias=bias), want


def check_gelu_formula():
    """The tanh form is PyTorch's approximate='tanh': within 1e-3 of the exact GELU."""
    worst = 0.0
    for i in range(-800, 801):
        v = i / 100.0
        exact = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
        worst = max(worst, abs(float(act_np(2, 0.0, np.float64(v))) - exact))
    assert worst < 1e-3, "GELU tanh approximation is off by %g" % worst
    return worst


def run_reference(program, kernel, params, inputs, workdir):
    with open(os.path.join(workdir, "params"), "w") as f:
        for k, v in params.items():
            f.write("%s %r\n" % (k, float(v)))
    for name, arr in inputs.items():
        np.ascontiguousarray(arr, np.float32).tofile(os.path.join(workdir, name + ".f32"))
    out = os.path.join(workdir, "out.f32")
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([program, kernel, workdir], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("refcheck %s failed: %s" % (kernel, r.stderr.strip()))
    return np.fromfile(out, np.float32)


def main(argv):
    if len(argv) < 2:
        print("usage: refcheck.py PATH/TO/refcheck [--seed S] [--verbose]", file=sys.stderr)
        return 2
    program = argv[1]
    seed = int.from_bytes(os.urandom(4), "little")
    verbose = "--verbose" in argv
    if "--seed" in argv:
        seed = int(argv[argv.index("--seed") + 1])
    print("refcheck.py: seed %d (replay with --seed %d)" % (seed, seed))
    rng = np.random.default_rng(seed)
    print("GELU tanh vs exact erf form: max difference %.2e over [-8, 8]" % check_gelu_formula())
    worst, counts, failures = {}, {}, 0
    with tempfile.TemporaryDirectory(prefix="kc-refcheck-") as workdir:
        for kernel, params, inputs, want in cases(rng):
            got = run_reference(program, kernel, params, inputs, workdir)
            err = rel_l2(got, want) if got.size == np.asarray(want).size else float("inf")
            worst[kernel] = max(worst.get(kernel, 0.0), err)
            counts[kernel] = counts.get(kernel, 0) + 1
            bad = not err <= BOUND
            failures += bad
            if bad or verbose:
                print("%s %-16s %-70s rel L2 %.2e" % ("FAIL" if bad else "ok  ", kernel, params, err))
    for kernel in worst:
        print("%-16s %2d cases  max relative L2 error %.2e  (bound %.0e)" % (kernel, counts[kernel], worst[kernel], BOUND))
    if failures:
        print("refcheck.py: %d case%s failed" % (failures, "" if failures == 1 else "s"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
