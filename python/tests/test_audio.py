"""kcrt.nn's audio front end against torchaudio (Debian's python3-torchaudio):
spectrogram and mel_spectrogram on fresh random signals with awkward
lengths (primes, shorter than a frame), every padding mode and output form,
batch > 1, the sizes RVC and XTTS use.

Bounds. An FFT output is a sum of n_fft products through log2(n_fft)
rounded stages, so each part is within gamma(4 log2 N + 8) of the frame's
sum |x w| (computed here in float64 from the same padded frames); torchaudio's
own FFT (float32 too) has the same bound, so the two may differ by twice it.
A magnitude inherits sqrt(2) of that, a power 2 |X| of it. A mel band adds
its filterbank sum (gamma(F) of sum fb spec) and the difference between
our filterbank (torchaudio's formulas in float64) and torchaudio's own
(float32: up to 3e-5 of its largest weight)."""
import math
import os

import numpy as np
import pytest

import kcrt
import kcrt.nn

torch = pytest.importorskip("torch")
torchaudio = pytest.importorskip("torchaudio")
BUNDLE = os.environ.get("KCRT_TEST_RVC_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_RVC_BUNDLE is not set")
EPS = float(np.finfo(np.float32).eps) / 2  # unit roundoff


def gamma(n):
    return n * EPS / (1 - n * EPS)


def frame_sums(x, n_fft, hop, win, center, pad_mode, pad=0):
    """sum |x w| of every frame, (..., frames), in float64."""
    x = np.abs(x.astype(np.float64))
    if pad:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)])
    if center:
        mode = {"reflect": "reflect", "constant": "constant", "replicate": "edge"}[pad_mode]
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=mode)
    frames = 1 + (x.shape[-1] - n_fft) // hop
    idx = np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]
    return (x[..., idx] * np.abs(win.astype(np.float64))).sum(-1)


def check(got, want, bound):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert np.all(np.isfinite(got))
    err = np.abs(got - want)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), "at %s: %g vs %g (error %g > bound %g)" % (
        worst, got[worst], want[worst], err[worst], bound[worst])


def spec_bound(sums, n_fft, power, want):
    """Per element, for (..., freq, frames[, 2]) outputs of both sides."""
    e = 2 * gamma(4 * math.ceil(math.log2(max(n_fft, 2))) + 8) * sums[..., None, :]
    if power is None:
        return np.broadcast_to(e[..., None], want.shape)
    if power == 1.0:
        return 1.5 * e + 0 * want
    return 2 * np.sqrt(np.abs(want)) * 1.5 * e + 3 * e * e


def padded_window(win, n_fft):
    full = np.zeros(n_fft)
    left = (n_fft - len(win)) // 2
    full[left:left + len(win)] = win
    return full


SPEC = [
    ((1000,), dict()),                                                              # torchaudio's defaults
    ((2, 16000), dict(n_fft=1024, hop_length=160, power=1.0)),                     # RMVPE's magnitudes
    ((3, 2, 997), dict(n_fft=512, win_length=400, hop_length=100, normalized=True, power=None)),
    ((1, 3001), dict(n_fft=105, hop_length=31, pad_mode="replicate")),             # radices 3, 5, 7
    ((2, 2051), dict(n_fft=2048, hop_length=512, center=False, power=None)),       # the largest, one frame
    ((1, 500), dict(n_fft=60, hop_length=7, pad_mode="constant", pad=3)),
    ((1, 40), dict(n_fft=64, hop_length=1, pad_mode="constant")),                  # shorter than a frame
    ((1, 1), dict(n_fft=1, hop_length=1, center=False)),
    ((1, 22050), dict(n_fft=1024, hop_length=256, normalized="frame_length", onesided=False)),
]


@pytest.mark.parametrize("shape,kw", SPEC, ids=[str(s[0]) + str(s[1]) for s in SPEC])
def test_spectrogram(ops, rng, shape, kw):
    x = rng.standard_normal(shape).astype(np.float32)
    got = ops.spectrogram(x, **kw)
    assert isinstance(got, kcrt.Tensor)
    ref = torchaudio.transforms.Spectrogram(**kw)(torch.from_numpy(x))
    if ref.is_complex():
        ref = torch.view_as_real(ref)
    want = ref.numpy()
    n_fft = kw.get("n_fft", 400)
    win_length = kw.get("win_length", n_fft)
    hop = kw.get("hop_length", win_length // 2)
    win = torch.hann_window(win_length).double().numpy()
    norm = kw.get("normalized", False)
    if norm is True or norm == "window":
        win = win / np.sqrt((win ** 2).sum())
    elif norm == "frame_length":
        win = win / np.sqrt(n_fft)
    sums = frame_sums(x, n_fft, hop, padded_window(win, n_fft), kw.get("center", True),
                      kw.get("pad_mode", "reflect"), kw.get("pad", 0))
    power = kw.get("power", 2.0)
    check(got.numpy(), want, spec_bound(sums, n_fft, power, want))


MEL = [
    # RMVPE (RVC's pitch): 16 kHz, n_fft 1024, hop 160, 128 bands 30..8000 Hz, magnitudes
    ((2, 16000), dict(sample_rate=16000, n_fft=1024, hop_length=160, n_mels=128, f_min=30.0, f_max=8000.0,
                      power=1.0)),
    # XTTS-v2 / HiFi-GAN: 22,050 Hz, n_fft 1024, hop 256, 80 bands, slaney scale and norm
    ((1, 22051), dict(sample_rate=22050, n_fft=1024, hop_length=256, n_mels=80, norm="slaney",
                      mel_scale="slaney")),
    ((997,), dict()),                                                              # torchaudio's defaults
    ((3, 1, 4001), dict(sample_rate=8000, n_fft=400, win_length=300, hop_length=77, n_mels=40, f_max=3000.0,
                        pad_mode="replicate")),
]


@pytest.mark.parametrize("shape,kw", MEL, ids=[str(s[0]) + str(s[1].get("sample_rate", "")) for s in MEL])
def test_mel_spectrogram(ops, rng, shape, kw):
    x = rng.standard_normal(shape).astype(np.float32)
    got = ops.mel_spectrogram(x, **kw)
    want = torchaudio.transforms.MelSpectrogram(**kw)(torch.from_numpy(x)).numpy()
    spec_kw = {k: v for k, v in kw.items() if k in ("n_fft", "win_length", "hop_length", "power", "pad_mode")}
    spec = torchaudio.transforms.Spectrogram(**spec_kw)(torch.from_numpy(x)).double().numpy()
    n_fft = kw.get("n_fft", 400)
    win_length = kw.get("win_length", n_fft)
    hop = kw.get("hop_length", win_length // 2)
    sums = frame_sums(x, n_fft, hop, padded_window(torch.hann_window(win_length).double().numpy(), n_fft), True,
                      kw.get("pad_mode", "reflect"))
    power = kw.get("power", 2.0)
    spec_err = spec_bound(sums, n_fft, power, spec)
    fb = torchaudio.functional.melscale_fbanks(n_fft // 2 + 1, float(kw.get("f_min", 0.0)),
                                               float(kw.get("f_max", kw.get("sample_rate", 16000) // 2)),
                                               kw.get("n_mels", 128), kw.get("sample_rate", 16000), kw.get("norm"),
                                               kw.get("mel_scale", "htk")).double().numpy()
    ours = kcrt.nn.melscale_fbanks(n_fft // 2 + 1, float(kw.get("f_min", 0.0)),
                                   float(kw.get("f_max", kw.get("sample_rate", 16000) // 2)), kw.get("n_mels", 128),
                                   kw.get("sample_rate", 16000), kw.get("norm"), kw.get("mel_scale", "htk"))
    assert np.abs(ours - fb).max() <= 3e-5 * fb.max()
    mel_abs = np.einsum("fm,...ft->...mt", fb, np.abs(spec))
    bound = (np.einsum("fm,...ft->...mt", fb, spec_err) + 2 * gamma(fb.shape[0]) * mel_abs
             + 3e-5 * fb.max() * np.abs(spec).sum(-2)[..., None, :])
    check(got.numpy(), want, bound)


def test_audio_errors(ops, rng):
    x = rng.standard_normal(1000).astype(np.float32)
    for kw, words in [(dict(n_fft=11 * 16), "factors 2, 3, 5 and 7"), (dict(n_fft=4096), "up to 2048"),
                      (dict(power=0.5), "power=0.5"), (dict(n_fft=64, win_length=100), "win_length <= n_fft"),
                      (dict(n_fft=64, window=np.ones(10, np.float32)), "size equal to win_length=64"),
                      (dict(n_fft=2048), "Padding size should be less"), (dict(pad_mode="circular"), "pad_mode")]:
        with pytest.raises(kcrt.Error, match=words):
            ops.spectrogram(x, **kw)
    with pytest.raises(kcrt.Error, match="mel_scale"):
        ops.mel_spectrogram(x, mel_scale="bark")
    with pytest.raises(kcrt.Error, match="f_min"):
        ops.mel_spectrogram(x, f_min=9000.0, f_max=8000.0)


RESAMPLE = [  # shape, orig, new, kwargs
    ((2, 4800), 48000, 16000, dict()),                        # RVC's input to ContentVec/RMVPE
    ((1, 4410), 44100, 16000, dict()),                        # 441/160: 475 taps
    ((3, 997), 40000, 48000, dict()),                         # the 40k model's output to 48 kHz
    ((1, 1, 50), 2, 3, dict(lowpass_filter_width=4, rolloff=0.9)),
    ((1,), 3, 1, dict()),                                     # one sample
    ((2, 333), 16000, 22050, dict(resampling_method="kaiser_window", beta=8.0)),
]


@pytest.mark.parametrize("shape,orig,new,kw", RESAMPLE, ids=[str(r[:3]) for r in RESAMPLE])
def test_resample(ops, rng, shape, orig, new, kw):
    x = rng.standard_normal(shape).astype(np.float32)
    got = ops.resample(x, orig, new, **kw)
    want = torchaudio.functional.resample(torch.from_numpy(x), orig, new, **kw).numpy()
    # each output sums taps products of |x| <= max|x| with a filter of
    # sum |h| <= taps; both sides round the sum (gamma(taps) each) and the
    # filters differ in float32 rounding (2 u of each weight)
    g = math.gcd(orig, new)
    o, n = orig // g, new // g
    taps = 2 * math.ceil(kw.get("lowpass_filter_width", 6) * o / (min(o, n) * kw.get("rolloff", 0.99))) + o
    bound = (2 * gamma(taps + 2) + 4 * EPS) * taps * np.abs(x).max() + 1e-30
    check(got.numpy(), want, np.full(want.shape, bound))


def test_resample_same_rate_and_errors(ops, rng):
    x = rng.standard_normal(100).astype(np.float32)
    assert np.array_equal(ops.resample(x, 16000, 16000).numpy(), x)
    with pytest.raises(kcrt.Error, match="positive"):
        ops.resample(x, 0, 16000)
    with pytest.raises(kcrt.Error, match="Invalid resampling method"):
        ops.resample(x, 3, 1, resampling_method="linear")
