"""RVC v2's NSF-HiFiGAN generator on kcrt.nn, its audio front end, and a
command line (docs/rvc.md):

    python -m kcrt.models.rvc convert model.pth G.safetensors
    python -m kcrt.models.rvc synth G.safetensors --input voice.wav --output out.wav

The generator is RVC's GeneratorNSF (the `dec` of a SynthesizerTrnMs768NSFsid):
a sine source from f0 (SineGen + a 1-to-1 linear + tanh), conv_pre, then per
upsampling stage leaky ReLU 0.1, a transposed convolution, the source through
a strided noise convolution added in, and the mean of three ResBlock1 (six
dilated convolutions each); leaky ReLU 0.01, conv_post, tanh. Every
convolution, activation and the source run on the device through kcrt.nn;
weight normalisation is folded into plain weights when the checkpoint is
loaded (weight = g v / |v|, |v| over all but the first axis, as
torch.nn.utils.weight_norm with dim=0), and the speaker embedding's cond
convolution into conv_pre's bias. kcrt.models.rvc_torch is the same model in
PyTorch, the reference it is tested against.
"""
import argparse
import json
import sys
import time
import wave

import numpy as np

import kcrt
import kcrt.nn
from kcrt import safetensors

# The generator halves of RVC's shipped configurations (configs/40k.json,
# configs/v2/32k.json, configs/v2/48k.json of the RVC WebUI); every one has
# 192 latent channels, a 256-wide speaker embedding, 512 channels after
# conv_pre and ResBlock1 with kernels 3, 7, 11 and dilations 1, 3, 5.
_COMMON = {"inter_channels": 192, "gin_channels": 256, "upsample_initial_channel": 512,
           "resblock_kernel_sizes": [3, 7, 11], "resblock_dilation_sizes": [[1, 3, 5]] * 3}
CONFIGS = {
    "32k": dict(_COMMON, sr=32000, upsample_rates=[10, 8, 2, 2], upsample_kernel_sizes=[20, 16, 4, 4]),
    "40k": dict(_COMMON, sr=40000, upsample_rates=[10, 10, 2, 2], upsample_kernel_sizes=[16, 16, 4, 4]),
    "48k": dict(_COMMON, sr=48000, upsample_rates=[12, 10, 2, 2], upsample_kernel_sizes=[24, 20, 4, 4]),
}
_CONFIG_KEY = "kc.rvc.config"  # the safetensors metadata entry that holds the config as JSON
LRELU_SLOPE = 0.1


def _fail(words):
    raise kcrt.Error("kcrt.models.rvc: " + words)


def fold_weight_norm(state):
    """A state dict with every `X.weight_g`/`X.weight_v` pair replaced by
    `X.weight` = g v / |v| (float64 arithmetic, float32 result)."""
    out = {}
    for name, a in state.items():
        if name.endswith(".weight_v"):
            base = name[:-len(".weight_v")]
            g = state.get(base + ".weight_g")
            if g is None:
                _fail("%s has no matching %s.weight_g" % (name, base))
            v = np.asarray(a, np.float64)
            norm = np.sqrt((v * v).reshape(v.shape[0], -1).sum(axis=1)).reshape((-1,) + (1,) * (v.ndim - 1))
            out[base + ".weight"] = (np.asarray(g, np.float64).reshape(norm.shape) * v / norm).astype(np.float32)
        elif not name.endswith(".weight_g"):
            out[name] = np.asarray(a, np.float32)
    return out


def config_from_rvc_list(cfg):
    """The config of an RVC inference checkpoint's `config` list
    ([spec_channels, segment_size, inter_channels, hidden_channels,
    filter_channels, n_heads, n_layers, kernel_size, p_dropout, resblock,
    resblock_kernel_sizes, resblock_dilation_sizes, upsample_rates,
    upsample_initial_channel, upsample_kernel_sizes, spk_embed_dim,
    gin_channels, sr])."""
    if not isinstance(cfg, (list, tuple)) or len(cfg) != 18:
        _fail("expected RVC's 18-entry config list, got %r" % (cfg,))
    if str(cfg[9]) != "1":
        _fail("resblock %r: only RVC's ResBlock1 (\"1\") is written on kcrt.nn" % (cfg[9],))
    sr = cfg[17]
    if isinstance(sr, str):
        sr = int(sr.rstrip("k")) * 1000
    return {"inter_channels": int(cfg[2]), "resblock_kernel_sizes": list(cfg[10]),
            "resblock_dilation_sizes": [list(d) for d in cfg[11]], "upsample_rates": list(cfg[12]),
            "upsample_initial_channel": int(cfg[13]), "upsample_kernel_sizes": list(cfg[14]),
            "gin_channels": int(cfg[16]), "sr": int(sr)}


def random_state(config, rng=None):
    """A generator state dict with RVC's names (weight_g/weight_v where RVC
    normalises weights) and random values, initialised as HiFi-GAN's
    init_weights does (normal, std 0.01): a checkpoint to try the pipeline
    without a trained model."""
    rng = rng or np.random.default_rng(0)
    cfg, st = config, {}

    def conv(name, cout, cin, k, norm, bias=True):
        w = rng.normal(0, 0.01, (cout, cin, k)).astype(np.float32)
        if norm:
            st[name + ".weight_v"] = w
            st[name + ".weight_g"] = np.sqrt((w.astype(np.float64) ** 2).sum(axis=(1, 2))).astype(
                np.float32).reshape(-1, 1, 1)
        else:
            st[name + ".weight"] = w
        if bias:
            st[name + ".bias"] = rng.uniform(-0.05, 0.05, cout).astype(np.float32)

    c0, nk = cfg["upsample_initial_channel"], len(cfg["resblock_kernel_sizes"])
    conv("conv_pre", c0, cfg["inter_channels"], 7, False)
    if cfg["gin_channels"]:
        conv("cond", c0, cfg["gin_channels"], 1, False)
    st["m_source.l_linear.weight"] = rng.uniform(-1, 1, (1, 1)).astype(np.float32)
    st["m_source.l_linear.bias"] = rng.uniform(-1, 1, 1).astype(np.float32)
    for i, (u, k) in enumerate(zip(cfg["upsample_rates"], cfg["upsample_kernel_sizes"])):
        ch = c0 // 2 ** (i + 1)
        conv("ups.%d" % i, 2 * ch, ch, k, True, bias=False)  # ConvTranspose1d: (in, out, k)
        st["ups.%d.bias" % i] = rng.uniform(-0.05, 0.05, ch).astype(np.float32)
        s = int(np.prod(cfg["upsample_rates"][i + 1:]))
        conv("noise_convs.%d" % i, ch, 1, 2 * s if i + 1 < len(cfg["upsample_rates"]) else 1, False)
        for j, (k2, dil) in enumerate(zip(cfg["resblock_kernel_sizes"], cfg["resblock_dilation_sizes"])):
            for n in range(len(dil)):
                for half in ("convs1", "convs2"):
                    conv("resblocks.%d.%s.%d" % (i * nk + j, half, n), ch, ch, k2, True)
    conv("conv_post", 1, c0 // 2 ** len(cfg["upsample_rates"]), 7, False, bias=False)
    return st


def save_checkpoint(path, state, config):
    """Writes a generator state dict (names with or without RVC's `dec.`
    prefix, weight norm folded or not) and its config as safetensors."""
    safetensors.save(path, {k: np.asarray(v) for k, v in state.items()}, {_CONFIG_KEY: json.dumps(config)})


def convert(pth, out):
    """An RVC .pth (an inference checkpoint {"weight", "config", ...} or a
    training G_*.pth {"model", ...}) -> a safetensors file of its generator
    (`dec.*`, float32) with its config. Needs torch to unpickle."""
    import torch
    ckpt = torch.load(pth, map_location="cpu")
    state = ckpt.get("weight") or ckpt.get("model")
    if state is None:
        _fail("%s has neither 'weight' (an inference checkpoint) nor 'model' (a training one)" % pth)
    if "config" in ckpt:
        config = config_from_rvc_list(ckpt["config"])
    else:
        sr = str(ckpt.get("sr", ""))
        if sr not in CONFIGS:
            _fail("%s has no config list and sr %r is not one of %s" % (pth, sr, ", ".join(CONFIGS)))
        config = CONFIGS[sr]
    dec = {k[len("dec."):]: v.float().numpy() for k, v in state.items() if k.startswith("dec.")}
    if not dec:
        _fail("%s holds no generator weights (no 'dec.' entries)" % pth)
    save_checkpoint(out, dec, config)
    return config


class Generator:
    """GeneratorNSF on kcrt.nn. Build with Generator.load(path, ops) or
    Generator(state, config, ops); call with the latent z (batch, 192,
    frames), f0 (batch, frames) in Hz and optionally the speaker embedding
    g (batch, 256, 1): returns the waveform (batch, 1, frames upp) as a
    kcrt.Tensor (.numpy() to read it)."""

    def __init__(self, state, config, ops=None):
        self.ops = ops or kcrt.nn.default_ops()
        self.config = cfg = dict(config)
        state = fold_weight_norm({k[len("dec."):] if k.startswith("dec.") else k: v for k, v in state.items()})
        self.upp = int(np.prod(cfg["upsample_rates"]))
        self.num_kernels = len(cfg["resblock_kernel_sizes"])
        t = self._params(state)
        self.pre = (t("conv_pre.weight"), t("conv_pre.bias"))
        self.cond = (t("cond.weight"), t("cond.bias")) if "cond.weight" in state else None
        self.lin = (t("m_source.l_linear.weight"), t("m_source.l_linear.bias"))
        self.stages = []
        for i, (u, k) in enumerate(zip(cfg["upsample_rates"], cfg["upsample_kernel_sizes"])):
            s = int(np.prod(cfg["upsample_rates"][i + 1:]))
            blocks = []
            for j, (k2, dil) in enumerate(zip(cfg["resblock_kernel_sizes"], cfg["resblock_dilation_sizes"])):
                r = "resblocks.%d." % (i * self.num_kernels + j)
                blocks.append([((t(r + "convs1.%d.weight" % n), t(r + "convs1.%d.bias" % n), d),
                                (t(r + "convs2.%d.weight" % n), t(r + "convs2.%d.bias" % n)))
                               for n, d in enumerate(dil)])
            self.stages.append({"up": (t("ups.%d.weight" % i), t("ups.%d.bias" % i), u, (k - u) // 2),
                                "noise": (t("noise_convs.%d.weight" % i), t("noise_convs.%d.bias" % i), s),
                                "blocks": blocks})
        self.post = t("conv_post.weight")
        left = sorted(set(state) - self._used)
        if left:
            _fail("unexpected weights %s (not RVC v2's GeneratorNSF with this config?)" % ", ".join(left[:5]))

    def _params(self, state):
        """t(name): the weight uploaded once."""
        self._used = set()

        def t(name):
            if name not in state:
                _fail("the checkpoint lacks %s" % name)
            self._used.add(name)
            return self.ops.ctx.tensor(np.ascontiguousarray(state[name], np.float32))
        return t

    @classmethod
    def load(cls, path, ops=None):
        """From a safetensors file written by convert or save_checkpoint
        (its config in the metadata), or any with a `config` of your own."""
        state, meta = safetensors.load(path)
        if _CONFIG_KEY not in meta:
            _fail("%s has no %s metadata: write it with `python -m kcrt.models.rvc convert`" % (path, _CONFIG_KEY))
        return cls(state, json.loads(meta[_CONFIG_KEY]), ops)

    def source(self, f0, noise=None, generator=None):
        """The harmonic source (batch, 1, frames upp): tanh(linear(SineGen))."""
        ops, f0 = self.ops, np.asarray(f0, np.float32)
        batch = f0.shape[0]
        sine, _, _ = ops.sine_source(f0, self.upp, self.config["sr"], 0, rand_ini=np.zeros((batch, 1), np.float32),
                                     noise=noise, generator=generator)
        har = ops.tanh(ops.linear(sine, *self.lin))
        return kcrt.Tensor(har.buffer, (batch, 1, har.shape[1]), np.float32)

    def __call__(self, z, f0, g=None, noise=None, generator=None):
        """noise: the source's standard normal draw (batch, frames upp, 1),
        None to draw it from `generator` (numpy), zeros for none."""
        ops = self.ops
        z = np.asarray(z, np.float32) if not isinstance(z, kcrt.Tensor) else z
        f0 = np.asarray(f0, np.float32)
        if len(z.shape) != 3 or z.shape[1] != self.config["inter_channels"]:
            _fail("z must be (batch, %d, frames), got %s" % (self.config["inter_channels"], list(z.shape)))
        if f0.shape != (z.shape[0], z.shape[2]):
            _fail("f0 must be (batch, frames) = %s, got %s" % ([z.shape[0], z.shape[2]], list(f0.shape)))
        har = self.source(f0, noise, generator)
        # one item at a time (each its own speaker bias); the items of device tensors are copies made on
        # the device, and so is the stacked result: nothing goes through the host
        item = lambda t: kcrt.Tensor(t.buffer, (1,) + t.shape, t.dtype)  # noqa: E731
        hars = [item(h) for h in ops._rows(har, 2)]
        zs = [item(r) for r in ops._rows(z, 2)] if isinstance(z, kcrt.Tensor) else None
        outs = []
        for b in range(z.shape[0]):  # the speaker's cond(g) is a per-item bias of conv_pre
            bias = self.pre[1]
            if g is not None and self.cond:  # on the device: no wait for it before the generator's work
                gb = np.asarray(g, np.float32)[b:b + 1]
                cond = ops.conv1d(gb, *self.cond)
                bias = ops.add(kcrt.Tensor(cond.buffer, (cond.shape[1],), np.float32), bias)
            zb = z[b:b + 1] if zs is None else zs[b]
            outs.append(self._one(ops.conv1d(zb, self.pre[0], bias, padding=3), hars[b]))
        return ops._stack(outs, (len(outs),) + outs[0].shape[1:])

    def _one(self, x, har):
        ops = self.ops
        for st in self.stages:
            w, b, u, pad = st["up"]
            x = ops.conv_transpose1d(ops.leaky_relu(x, LRELU_SLOPE), w, b, stride=u, padding=pad)
            nw, nb, s = st["noise"]
            x = ops.add(x, ops.conv1d(har, nw, nb, stride=s, padding=s // 2) if s > 1 else ops.conv1d(har, nw, nb))
            xs, act = None, ops.leaky_relu(x, LRELU_SLOPE)  # every resblock starts from leaky_relu(x)
            for block in st["blocks"]:
                r = self._resblock(x, act, block)
                xs = r if xs is None else ops.add(xs, r)
            x = ops.mul(xs, 1.0 / self.num_kernels)
        return ops.tanh(ops.conv1d(ops.leaky_relu(x, 0.01), self.post, None, padding=3))

    def _resblock(self, x, act, block):
        """ResBlock1: x + c2(lrelu(c1(lrelu(x)))) per dilation; act is lrelu(x) made already. The
        lrelu after c1 is c1's own epilogue (one launch, one pass fewer)."""
        ops = self.ops
        for i, ((w1, b1, d), (w2, b2)) in enumerate(block):
            k1, k2 = w1.shape[-1], w2.shape[-1]
            xt = ops._conv1d_leaky(act if i == 0 else ops.leaky_relu(x, LRELU_SLOPE), w1, b1,
                                   (k1 * d - d) // 2, d, LRELU_SLOPE)
            x = ops.add(ops.conv1d(xt, w2, b2, padding=(k2 - 1) // 2), x)
        return x


# ---- the audio front end -------------------------------------------------------------------------------------------

def read_wav(path):
    """(mono float32 samples in [-1, 1), sample rate) of a PCM wav (8, 16,
    24 or 32 bit); channels are averaged."""
    with wave.open(path, "rb") as w:
        n, ch, width, sr = w.getnframes(), w.getnchannels(), w.getsampwidth(), w.getframerate()
        raw = w.readframes(n)
    if width == 1:
        a = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128) / 128
    elif width == 2:
        a = np.frombuffer(raw, "<i2").astype(np.float32) / 32768
    elif width == 3:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        a = ((b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8 >> 8).astype(np.float32) / 8388608
    elif width == 4:
        a = np.frombuffer(raw, "<i4").astype(np.float32) / 2147483648
    else:
        _fail("%s: %d-byte samples are not PCM that this reader knows" % (path, width))
    return a.reshape(-1, ch).mean(axis=1).astype(np.float32), sr


def write_wav(path, samples, sr):
    """16-bit mono PCM (x 32768, as read_wav reads it back), clipped."""
    pcm = np.clip(np.round(np.asarray(samples, np.float64).reshape(-1) * 32768), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sr))
        w.writeframes(pcm.tobytes())


def front_end(samples, sr, ops=None, fmin=50.0, fmax=1100.0):
    """RVC's front end on kc: resample to 16 kHz, the log-mel spectrogram as
    RMVPE takes it (n_fft 1024, hop 160, 128 mels from 30 Hz to 8 kHz,
    log of the magnitude mel clamped at 1e-5), and YIN f0 on 10 ms frames
    (hop 160 at 16 kHz: one f0 per generator frame). Returns (wave16k,
    log_mel (128, frames), f0 (frames,) in Hz with 0 where unvoiced)."""
    ops = ops or kcrt.nn.default_ops()
    x = np.asarray(samples, np.float32)[None]
    if sr != 16000:
        x = ops.resample(x, sr, 16000).numpy()
    mel = ops.mel_spectrogram(x, sample_rate=16000, n_fft=1024, win_length=1024, hop_length=160, f_min=30.0,
                              f_max=8000.0, n_mels=128, power=1.0, norm="slaney", mel_scale="slaney").numpy()
    log_mel = np.log(np.maximum(mel, 1e-5))[0]
    f0, ap = ops.yin(x, 16000, frame_length=1024, hop_length=160, fmin=fmin, fmax=fmax)
    f0, ap = f0.numpy()[0], ap.numpy()[0]
    f0 = np.where(ap < 0.2, f0, 0).astype(np.float32)  # YIN's aperiodicity threshold: voiced frames only
    return x[0], log_mel, f0


# ---- the command line -------------------------------------------------------------------------------------------

def _synth(args):
    ops = kcrt.nn.Ops(kcrt.default_context().load(args.bundle)) if args.bundle else kcrt.nn.default_ops()
    gen = Generator.load(args.checkpoint, ops)
    sr_out = gen.config["sr"]
    samples, sr = read_wav(args.input)
    if args.warmup:  # the front end's pipelines too: a first Vulkan run compiles them (2.6 s on an H200)
        front_end(samples, sr, ops)
    t0 = time.perf_counter()
    _, log_mel, f0 = front_end(samples, sr, ops)
    t1_front = time.perf_counter() - t0
    f0 = f0 * 2 ** (args.f0_up_key / 12)
    frames = len(f0)
    if args.latent:
        z = np.load(args.latent).astype(np.float32)
        z = z[None] if z.ndim == 2 else z
        frames = min(frames, z.shape[2])
        z, f0 = z[:, :, :frames], f0[:frames]
    else:  # no encoder here: a fixed random latent (see docs/rvc.md)
        z = np.random.default_rng(args.seed).standard_normal((1, gen.config["inter_channels"], frames)).astype(
            np.float32) * np.float32(args.latent_scale)
    g = np.random.default_rng(args.seed + 1).standard_normal((1, gen.config["gin_channels"], 1)).astype(np.float32)
    if args.profile:
        prof = _profile(ops)
    if args.warmup:  # pipelines created and buffers pooled before the timed run
        gen(z, f0[None], g, generator=np.random.default_rng(args.seed + 2)).numpy()
        if args.profile:
            prof.clear()
    st0 = ops.ctx.stats()
    t1 = time.perf_counter()
    y = gen(z, f0[None], g, generator=np.random.default_rng(args.seed + 2)).numpy()[0, 0]
    t2 = time.perf_counter()
    st = {k: v - st0[k] for k, v in ops.ctx.stats().items()}
    write_wav(args.output, y, sr_out)
    if args.profile:
        _profile_report(prof, gen)
    dur = len(y) / sr_out
    voiced = f0[f0 > 0]
    print("input      %s: %.2f s at %d Hz; %d frames, %d voiced (median f0 %.1f Hz); log-mel %s" % (
        args.input, len(samples) / sr, sr, frames, len(voiced), np.median(voiced) if len(voiced) else 0,
        "x".join(map(str, log_mel.shape))))
    print("output     %s: %.2f s at %d Hz" % (args.output, dur, sr_out))
    print("front end  %.3f s; generator %.3f s on %s" % (t1_front, t2 - t1, ops.ctx))
    print("generator  %d launches in %d submissions, %d waits for the device (the result's read-back among "
          "them), %d buffers allocated, %d reused" % (st["launches"], st["submissions"], st["waits"],
                                                      st["buffer_allocations"], st["buffers_reused"]))
    print("real-time factor (kc)       %.3f (front end + generator%s)" % (
        (t2 - t1 + t1_front) / dur, ", after a warm-up run" if args.warmup else ""))
    for device in (args.compare_torch or "").split(",") if args.compare_torch else []:
        _time_torch(args.checkpoint, gen.config, device, (z, f0[None].astype(np.float32), g), dur)
    return 0


def _profile(ops):
    """Wraps ops' methods so that each call waits for the device and is
    timed: {op name: [calls, seconds]}, from the next call on."""
    prof = {}
    for name in ("conv1d", "_conv1d_leaky", "conv_transpose1d", "leaky_relu", "add", "mul", "tanh", "linear",
                 "sine_source"):
        def timed(*a, _f=getattr(ops, name), _n=name.replace("_conv1d_leaky", "conv1d+leaky_relu"), **kw):
            t0 = time.perf_counter()
            r = _f(*a, **kw)
            ops.ctx.finish()
            rec = prof.setdefault(_n, [0, 0.0])
            rec[0] += 1
            rec[1] += time.perf_counter() - t0
            return r
        setattr(ops, name, timed)
    return prof


def _profile_report(prof, gen):
    print("profile of the generator's timed run (the device waited for after each op):")
    total = sum(v[1] for v in prof.values())
    for name, (calls, secs) in sorted(prof.items(), key=lambda kv: -kv[1][1]):
        print("  %-18s %5d calls %9.3f s %5.1f%%" % (name, calls, secs, 100 * secs / total if total else 0))


def _time_torch(checkpoint, config, device, inputs, dur):
    import torch

    from . import rvc_torch
    dev = torch.device(device)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False  # float32, as kc computes
    ref = rvc_torch.from_config(config)
    state, _ = safetensors.load(checkpoint)
    ref.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    ref = ref.to(dev).eval()
    args = [torch.from_numpy(a).to(dev) for a in inputs]
    with torch.no_grad():
        for _ in range(2 if dev.type == "cuda" else 1):  # the first CUDA call pays for cuDNN's set-up
            t0 = time.perf_counter()
            ref(*args)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t1 = time.perf_counter()
    where = "%d threads" % torch.get_num_threads() if dev.type == "cpu" else torch.cuda.get_device_name(dev)
    print("real-time factor (PyTorch %s, %s, float32 (TF32 off), generator only) %.3f" % (
        dev.type, where, (t1 - t0) / dur))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m kcrt.models.rvc", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert", help="an RVC .pth -> a safetensors generator checkpoint (needs torch)")
    c.add_argument("pth")
    c.add_argument("output")
    r = sub.add_parser("random-checkpoint", help="a generator with random weights (no trained model needed)")
    r.add_argument("output")
    r.add_argument("--config", choices=sorted(CONFIGS), default="40k")
    r.add_argument("--seed", type=int, default=0)
    s = sub.add_parser("synth", help="a wav through the front end and the generator -> a wav; prints the RTF")
    s.add_argument("checkpoint", help="a safetensors file from `convert`")
    s.add_argument("--input", required=True, help="a PCM wav (any rate; espeak-ng -w makes one)")
    s.add_argument("--output", required=True)
    s.add_argument("--latent", help="the generator's input z (192 x frames .npy) from RVC's encoder; "
                                    "default: a random latent (no encoder here)")
    s.add_argument("--latent-scale", type=float, default=0.5)
    s.add_argument("--f0-up-key", type=float, default=0.0, help="transpose the pitch by this many semitones")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--warmup", action="store_true", help="run the front end and the generator once before the timed run")
    s.add_argument("--profile", action="store_true", help="time each op, waiting for the device after each")
    s.add_argument("--bundle", help="kc bundle of kernels/ (default: $KCRT_BUNDLE or the installed one)")
    s.add_argument("--compare-torch", nargs="?", const="cpu", metavar="DEVICE",
                   help="also time the PyTorch reference (kcrt.models.rvc_torch) on DEVICE: cpu (the default), "
                        "cuda, or both as cuda,cpu")
    args = p.parse_args(argv)
    try:
        if args.cmd == "convert":
            cfg = convert(args.pth, args.output)
            print("wrote %s (%d Hz generator, upsampling %s)" % (args.output, cfg["sr"], cfg["upsample_rates"]))
            return 0
        if args.cmd == "random-checkpoint":
            save_checkpoint(args.output, random_state(CONFIGS[args.config], np.random.default_rng(args.seed)),
                            CONFIGS[args.config])
            print("wrote %s (RVC v2 %s generator, random weights)" % (args.output, args.config))
            return 0
        return _synth(args)
    except (kcrt.Error, OSError, ValueError) as e:
        print("kcrt.models.rvc: error: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
