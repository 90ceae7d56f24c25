#!/usr/bin/env python3
"""ops_cpu.py — kcrt.nn's ops at the real models' shapes on this machine's
device (lavapipe on a GPU-less machine) next to the same op in PyTorch /
torchaudio on its CPU, in one run; a markdown table of times and ratios.

    KCRT_BUNDLE=build/share/kc/rvc.kcb python3 bench/ops_cpu.py [--repeat 5] [--markdown FILE]

Each op runs once to warm up (pipelines built, filters and twiddles made),
then --repeat times; the median wall time is reported, inputs uploaded
beforehand and the result read back to the host (`.numpy()`) inside the
timing, as an app sees it. PyTorch runs with its default threads, float32
(float16 for the f16 row, where PyTorch 1.13's CPU half matmul is the
comparison an app would get). yin has no PyTorch op: aubio's C yin (the
same estimator, frame by frame) stands in. A ratio above 1 means kcrt is
slower. These are timings of whole ops through Python, not kernels:
docs/benchmarks.md measures kernels against the device's roofline.
"""
import argparse
import statistics
import time

import numpy as np


def median_time(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cases(ops, torch, torchaudio, rng):
    F = torch.nn.functional
    audio16 = rng.standard_normal(160000).astype(np.float32)       # 10 s at 16 kHz
    audio48 = rng.standard_normal(480000).astype(np.float32)       # 10 s at 48 kHz
    audio22 = rng.standard_normal(220500).astype(np.float32)       # 10 s at 22,050 Hz
    t16, t48, t22 = (torch.from_numpy(a) for a in (audio16, audio48, audio22))
    out = []

    mel_kw = dict(sample_rate=16000, n_fft=1024, hop_length=160, n_mels=128, f_min=30.0, f_max=8000.0, power=1.0)
    mel = torchaudio.transforms.MelSpectrogram(**mel_kw)
    out.append(("mel_spectrogram, RMVPE: 10 s at 16 kHz, 1024/160, 128 bands",
                lambda: ops.mel_spectrogram(audio16, **mel_kw).numpy(), lambda: mel(t16)))
    spec = torchaudio.transforms.Spectrogram(n_fft=1024, hop_length=256)
    out.append(("spectrogram, XTTS-v2: 10 s at 22,050 Hz, 1024/256",
                lambda: ops.spectrogram(audio22, n_fft=1024, hop_length=256).numpy(), lambda: spec(t22)))
    out.append(("resample 48 -> 16 kHz, 10 s",
                lambda: ops.resample(audio48, 48000, 16000).numpy(),
                lambda: torchaudio.functional.resample(t48, 48000, 16000)))
    a441 = audio48[:441000]
    t441 = torch.from_numpy(a441)
    out.append(("resample 44.1 -> 16 kHz, 10 s",
                lambda: ops.resample(a441, 44100, 16000).numpy(),
                lambda: torchaudio.functional.resample(t441, 44100, 16000)))

    q = rng.standard_normal((1, 12, 500, 64)).astype(np.float32)
    tq = torch.from_numpy(q)

    def torch_attention():
        s = torch.matmul(tq, tq.transpose(-2, -1)) / 8.0
        return torch.matmul(torch.softmax(s, -1), tq)
    out.append(("scaled_dot_product_attention, ContentVec: 12 x 500 x 64",
                lambda: ops.scaled_dot_product_attention(q, q, q).numpy(), torch_attention))
    qd = rng.standard_normal((1, 16, 1, 64)).astype(np.float32)
    kv = rng.standard_normal((1, 16, 400, 64)).astype(np.float32)
    tqd, tkv = torch.from_numpy(qd), torch.from_numpy(kv)
    out.append(("scaled_dot_product_attention, XTTS decode: 16 x 1 x 400 x 64",
                lambda: ops.scaled_dot_product_attention(qd, kv, kv).numpy(),
                lambda: torch.matmul(torch.softmax(torch.matmul(tqd, tkv.transpose(-2, -1)) / 8.0, -1), tkv)))

    qh, kvh = (rng.standard_normal((1, 16, n, 64)).astype(np.float16) for n in (1, 1024))
    tqh, tkvh = torch.from_numpy(qh).float(), torch.from_numpy(kvh).float()
    out.append(("scaled_dot_product_attention float16, XTTS decode: 16 x 1 x 1024 x 64 (PyTorch: cast to float32)",
                lambda: ops.scaled_dot_product_attention(qh, kvh, kvh).numpy(),
                lambda: torch.matmul(torch.softmax(torch.matmul(tqh, tkvh.transpose(-2, -1)) / 8.0, -1), tkvh).half()))

    cx = rng.standard_normal((1, 128, 4000)).astype(np.float32)
    cw = (rng.standard_normal((128, 128, 3)) / 20).astype(np.float32)
    cb = rng.standard_normal(128).astype(np.float32)
    tcx, tcw, tcb = torch.from_numpy(cx), torch.from_numpy(cw), torch.from_numpy(cb)
    out.append(("conv1d float32, HiFi-GAN resblock: 128 channels, 4,000 steps, kernel 3",
                lambda: ops.conv1d(cx, cw, cb, padding=1).numpy(), lambda: F.conv1d(tcx, tcw, tcb, padding=1)))
    cx16, cw16, cb16 = cx.astype(np.float16), cw.astype(np.float16), cb.astype(np.float16)
    out.append(("conv1d float16, the same (PyTorch: cast to float32)",
                lambda: ops.conv1d(cx16, cw16, cb16, padding=1).numpy(),
                lambda: F.conv1d(tcx, tcw, tcb, padding=1).half()))

    x = rng.standard_normal((1, 16, 1000, 128)).astype(np.float32)
    w = (0.1 * rng.standard_normal((16, 16, 3, 3))).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
    out.append(("conv2d 3x3, RMVPE: 16 -> 16 channels, 1000 x 128",
                lambda: ops.conv2d(x, w, b, padding=1).numpy(), lambda: F.conv2d(tx, tw, tb, padding=1)))

    gru = torch.nn.GRU(384, 256, batch_first=True)
    gx = rng.standard_normal((1, 1000, 384)).astype(np.float32)
    tgx = torch.from_numpy(gx)
    p = [getattr(gru, n + "_l0").detach().numpy() for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    out.append(("gru, one direction of RMVPE's BiGRU: 1000 steps, 384 -> 256",
                lambda: ops.gru(gx, *p, batch_first=True)[0].numpy(), lambda: gru(tgx)))

    f0 = rng.uniform(80, 400, (1, 1000)).astype(np.float32)
    noise = rng.standard_normal((1, 480000, 1)).astype(np.float32)
    tf0, tnoise = torch.from_numpy(f0), torch.from_numpy(noise)

    def rvc_sinegen():  # RVC v2's SineGen.forward, harmonic_num 0, its random draws given
        rad = (tf0[:, :, None] / 48000.0) % 1
        tmp = torch.cumsum(rad, 1) * 480
        tmp = F.interpolate(tmp.transpose(2, 1), scale_factor=480, mode="linear", align_corners=True).transpose(2, 1)
        radu = F.interpolate(rad.transpose(2, 1), scale_factor=480, mode="nearest").transpose(2, 1)
        tmp %= 1
        shift = torch.zeros_like(radu)
        shift[:, 1:, :] = ((tmp[:, 1:, :] - tmp[:, :-1, :]) < 0) * -1.0
        sine = torch.sin(torch.cumsum(radu + shift, dim=1) * 2 * np.pi) * 0.1
        uv = F.interpolate((tf0[:, None] > 0).float(), scale_factor=480, mode="nearest").transpose(2, 1)
        return sine * uv + (uv * 0.003 + (1 - uv) * 0.1 / 3) * tnoise
    out.append(("sine_source, RVC v2 48 kHz: 1000 frames x 480",
                lambda: ops.sine_source(f0, 480, 48000, noise=noise, rand_ini=np.zeros((1, 1), np.float32))[0].numpy(),
                rvc_sinegen))

    w16 = (rng.standard_normal((3072, 768)) / 28).astype(np.float16)
    x16 = rng.standard_normal((140, 768)).astype(np.float16)
    tw16, tx16 = torch.from_numpy(w16), torch.from_numpy(x16)
    # PyTorch 1.13 has no half matmul on the CPU: an app there casts to float32
    out.append(("linear float16, ContentVec FFN: 140 x 768 -> 3072 (PyTorch: cast to float32)",
                lambda: ops.linear(x16, w16).numpy(), lambda: F.linear(tx16.float(), tw16.float()).half()))
    w32, x32 = w16.astype(np.float32), x16.astype(np.float32)
    tw32, tx32 = torch.from_numpy(w32), torch.from_numpy(x32)
    out.append(("linear float32, ContentVec FFN: 140 x 768 -> 3072",
                lambda: ops.linear(x32, w32).numpy(), lambda: F.linear(tx32, tw32)))

    # (names of their own: the lambdas above read their variables when called)
    nx = (rng.standard_normal((1, 512, 31999)) * 3 + 1).astype(np.float32)
    ng, nb = rng.standard_normal(512).astype(np.float32), rng.standard_normal(512).astype(np.float32)
    tnx, tng, tnb = torch.from_numpy(nx), torch.from_numpy(ng), torch.from_numpy(nb)
    out.append(("group_norm, ContentVec's first: 512 groups of 1 channel, 31,999 steps",
                lambda: ops.group_norm(nx, 512, ng, nb).numpy(), lambda: F.group_norm(tnx, 512, tng, tnb)))
    lx = rng.standard_normal((140, 768)).astype(np.float32)
    lg, lb = rng.standard_normal(768).astype(np.float32), rng.standard_normal(768).astype(np.float32)
    tlx, tlg, tlb = torch.from_numpy(lx), torch.from_numpy(lg), torch.from_numpy(lb)
    out.append(("layer_norm, ContentVec: 140 x 768",
                lambda: ops.layer_norm(lx, 768, lg, lb).numpy(), lambda: F.layer_norm(tlx, (768,), tlg, tlb)))

    # the rest of kcrt.nn's ops, one real shape each (so that every op has a row)
    def pair(name, ours, theirs):
        out.append((name, ours, theirs))
    up = rng.standard_normal((1, 128, 4000)).astype(np.float32)
    uw = (rng.standard_normal((128, 64, 4)) / 20).astype(np.float32)
    tup, tuw = torch.from_numpy(up), torch.from_numpy(uw)
    pair("conv_transpose1d, RVC 40k's third upsampler: 128 -> 64, kernel 4, stride 2, 4,000 steps",
         lambda: ops.conv_transpose1d(up, uw, stride=2, padding=1).numpy(),
         lambda: F.conv_transpose1d(tup, tuw, stride=2, padding=1))
    fx = rng.standard_normal((1, 1, 16000)).astype(np.float32)
    fw = (rng.standard_normal((512, 1, 10)) / 3).astype(np.float32)
    tfx, tfw = torch.from_numpy(fx), torch.from_numpy(fw)
    pair("conv1d strided, ContentVec's first layer: 1 -> 512, kernel 10, stride 5, 1 s at 16 kHz",
         lambda: ops.conv1d(fx, fw, stride=5).numpy(), lambda: F.conv1d(tfx, tfw, stride=5))
    sx = rng.standard_normal((12, 500, 500)).astype(np.float32)
    tsx = torch.from_numpy(sx)
    pair("softmax, HuBERT's scores: 12 x 500 rows of 500", lambda: ops.softmax(sx, -1).numpy(),
         lambda: torch.softmax(tsx, -1))
    lx1 = rng.standard_normal((1, 1026)).astype(np.float32)
    tlx1 = torch.from_numpy(lx1)
    pair("log_softmax, XTTS's next audio token: 1 x 1,026", lambda: ops.log_softmax(lx1, -1).numpy(),
         lambda: torch.log_softmax(tlx1, -1))
    gx1 = rng.standard_normal((140, 3072)).astype(np.float32)
    tgx1 = torch.from_numpy(gx1)
    pair("gelu, HuBERT's FFN: 140 x 3,072", lambda: ops.gelu(gx1).numpy(), lambda: F.gelu(tgx1))
    hx = rng.standard_normal((128, 4000)).astype(np.float32)
    thx = torch.from_numpy(hx)
    pair("leaky_relu, HiFi-GAN: 128 x 4,000", lambda: ops.leaky_relu(hx, 0.1).numpy(), lambda: F.leaky_relu(thx, 0.1))
    pair("add, a residual: 128 x 4,000", lambda: ops.add(hx, hx).numpy(), lambda: torch.add(thx, thx))
    tx48 = rng.standard_normal(48000).astype(np.float32)
    ttx48 = torch.from_numpy(tx48)
    pair("tanh, the generator's output: 1 s at 48 kHz", lambda: ops.tanh(tx48).numpy(), lambda: torch.tanh(ttx48))
    mel_p = np.abs(rng.standard_normal((128, 1001))).astype(np.float32)
    tmel = torch.from_numpy(mel_p)
    pair("log(clamp(mel, min=1e-5)), RMVPE's log-mel: 128 x 1,001",
         lambda: ops.log(ops.clamp(mel_p, min=1e-5)).numpy(), lambda: torch.log(torch.clamp(tmel, min=1e-5)))
    pa = rng.standard_normal((1, 160000)).astype(np.float32)
    tpa = torch.from_numpy(pa)
    pair("pad reflect, RVC's STFT front end: 512 each side of 10 s at 16 kHz",
         lambda: ops.pad(pa, (512, 512), mode="reflect").numpy(), lambda: F.pad(tpa[None], (512, 512), mode="reflect"))
    ff = rng.uniform(80, 400, (1, 1, 1000)).astype(np.float32)
    tff = torch.from_numpy(ff)
    pair("interpolate nearest, f0 to 48 kHz: 1,000 frames x 480",
         lambda: ops.interpolate(ff, scale_factor=480).numpy(), lambda: F.interpolate(tff, scale_factor=480))
    ma, mb = (rng.standard_normal((12, 500, 64)).astype(np.float32),
              rng.standard_normal((12, 64, 500)).astype(np.float32))
    tma, tmb = torch.from_numpy(ma), torch.from_numpy(mb)
    pair("matmul batched, HuBERT's q k^T: 12 x (500 x 64 @ 64 x 500)", lambda: ops.matmul(ma, mb).numpy(),
         lambda: torch.matmul(tma, tmb))

    try:
        import aubio

        def aubio_yin():
            pitch = aubio.pitch("yin", 1024, 160, 16000)
            pitch.set_tolerance(0.1)
            return [pitch(audio16[i:i + 160])[0] for i in range(0, len(audio16) - 159, 160)]
        out.append(("yin, 10 s at 16 kHz, frames 1024, hop 160 (against aubio's C yin)",
                    lambda: ops.yin(audio16, 16000, 1024, 160)[0].numpy(), aubio_yin))
    except ImportError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--markdown")
    args = ap.parse_args()
    import torch
    import torchaudio

    import kcrt
    import kcrt.nn
    ops = kcrt.nn.default_ops()
    rng = np.random.default_rng(0)
    rows = ["| op and shape | kcrt on %s | PyTorch CPU (%d threads) | ratio |" % (ops.ctx.device_name,
                                                                             torch.get_num_threads()),
            "|---|---|---|---|"]
    for name, ours, theirs in cases(ops, torch, torchaudio, rng):
        a, b = median_time(ours, args.repeat), median_time(theirs, args.repeat)
        rows.append("| %s | %.1f ms | %.1f ms | %.2f |" % (name, a * 1e3, b * 1e3, a / b))
        print(rows[-1], flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
