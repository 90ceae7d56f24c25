"""kcrt.nn.sine_source (NSF-HiFiGAN's SineGen, as RVC v2 runs it) against
two references:

* the formula in float64: phi = (cumulative sum of the nearest-upsampled
  per-frame phase steps) mod 1, sine = amp sin(2 pi phi) uv + noise;
  the phase is a sum mod 1 of `frames` rounded steps, so it may be off by
  (2 frames + 96) u turns (2 pi amp times that in the output);
* RVC's SineGen.forward transcribed into torch (rvc_sinegen below, from
  RVC's infer_pack/models.py), fed the same random draws, on short inputs
  where its float32 cumsum stays accurate: the two agree to its rounding.
"""
import math
import os

import numpy as np
import pytest

import kcrt
import kcrt.nn

torch = pytest.importorskip("torch")
F = torch.nn.functional
BUNDLE = os.environ.get("KCRT_TEST_RVC_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="KCRT_TEST_RVC_BUNDLE is not set")
U = float(np.finfo(np.float32).eps) / 2


def rvc_sinegen(f0, upp, sr, harmonic_num, sine_amp, noise_std, threshold, rand_ini, randn):
    """RVC v2's SineGen.forward (infer_pack/models.py) with its two random
    draws passed in."""
    dim = harmonic_num + 1
    f0 = f0[:, None].transpose(1, 2)
    f0_buf = torch.zeros(f0.shape[0], f0.shape[1], dim)
    f0_buf[:, :, 0] = f0[:, :, 0]
    for idx in range(harmonic_num):
        f0_buf[:, :, idx + 1] = f0_buf[:, :, 0] * (idx + 2)
    rad_values = (f0_buf / sr) % 1
    rand_ini = rand_ini.clone()
    rand_ini[:, 0] = 0
    rad_values[:, 0, :] = rad_values[:, 0, :] + rand_ini
    tmp_over_one = torch.cumsum(rad_values, 1)
    tmp_over_one *= upp
    tmp_over_one = F.interpolate(tmp_over_one.transpose(2, 1), scale_factor=upp, mode="linear",
                                 align_corners=True).transpose(2, 1)
    rad_values = F.interpolate(rad_values.transpose(2, 1), scale_factor=upp, mode="nearest").transpose(2, 1)
    tmp_over_one %= 1
    tmp_over_one_idx = (tmp_over_one[:, 1:, :] - tmp_over_one[:, :-1, :]) < 0
    cumsum_shift = torch.zeros_like(rad_values)
    cumsum_shift[:, 1:, :] = tmp_over_one_idx * -1.0
    sine_waves = torch.sin(torch.cumsum(rad_values + cumsum_shift, dim=1) * 2 * np.pi)
    sine_waves = sine_waves * sine_amp
    uv = (f0 > threshold).float()
    uv = F.interpolate(uv.transpose(2, 1), scale_factor=upp, mode="nearest").transpose(2, 1)
    noise_amp = uv * noise_std + (1 - uv) * sine_amp / 3
    noise = noise_amp * randn
    sine_waves = sine_waves * uv + noise
    return sine_waves, uv, noise


def draw(rng, batch, frames, unvoiced=0.2):
    f0 = rng.uniform(60, 1100, (batch, frames)).astype(np.float32)
    f0[rng.random((batch, frames)) < unvoiced] = 0
    return f0


CASES = [(1, 1, 1, 0), (2, 50, 400, 0), (1, 100, 480, 0), (3, 20, 320, 2), (1, 301, 1, 8), (1, 1000, 480, 0)]


@pytest.mark.parametrize("batch,frames,upp,harmonics", CASES, ids=[str(c) for c in CASES])
def test_sine_source_formula(ops, rng, batch, frames, upp, harmonics):
    sr, amp, nstd = 48000, 0.1, 0.003
    f0 = draw(rng, batch, frames)
    dim = harmonics + 1
    rand_ini = rng.random((batch, dim)).astype(np.float32)
    noise = rng.standard_normal((batch, frames * upp, dim)).astype(np.float32)
    sine, uv, nz = ops.sine_source(f0, upp, sr, harmonics, amp, nstd, rand_ini=rand_ini, noise=noise)
    rad = np.remainder(f0[:, :, None] * np.arange(1, dim + 1, dtype=np.float32) / np.float32(sr), np.float32(1))
    rand_ini[:, 0] = 0
    rad[:, 0, :] += rand_ini
    phi = np.cumsum(np.repeat(rad.astype(np.float64), upp, axis=1), axis=1) % 1.0
    uvs = np.repeat((f0 > 0).astype(np.float64), upp, axis=1)[:, :, None]
    namp = uvs * nstd + (1 - uvs) * np.float32(amp) / 3
    want = np.float32(amp) * np.sin(2 * np.pi * phi) * uvs + namp * noise
    bound = 2 * math.pi * amp * (2 * frames + 96) * U + 4 * U * (amp + np.abs(want))
    got = sine.numpy()
    assert got.shape == (batch, frames * upp, dim) and uv.shape == (batch, frames * upp, 1)
    assert np.all(np.abs(got - want) <= bound), np.abs(got - want).max()
    assert np.array_equal(uv.numpy()[:, :, 0], uvs[:, :, 0].astype(np.float32))
    assert np.allclose(nz.numpy(), namp * noise, rtol=2 * U, atol=0)


@pytest.mark.parametrize("batch,frames,upp,harmonics", [(1, 3, 40, 0), (2, 5, 400, 1), (1, 8, 480, 0)])
def test_sine_source_matches_rvc(ops, rng, batch, frames, upp, harmonics):
    sr = 40000
    f0 = draw(rng, batch, frames)
    dim = harmonics + 1
    rand_ini = rng.random((batch, dim)).astype(np.float32)
    noise = rng.standard_normal((batch, frames * upp, dim)).astype(np.float32)
    sine, uv, nz = ops.sine_source(f0, upp, sr, harmonics, rand_ini=rand_ini, noise=noise)
    with torch.no_grad():
        w_sine, w_uv, w_nz = rvc_sinegen(torch.from_numpy(f0), upp, sr, harmonics, 0.1, 0.003, 0,
                                         torch.from_numpy(rand_ini), torch.from_numpy(noise))
    # RVC's float32 cumsum of up to frames upp steps of < 2 turns each
    bound = 2 * math.pi * 0.1 * (4 * frames * upp * U * 2 + 1e-6)
    assert np.abs(sine.numpy() - w_sine.numpy()).max() <= bound
    assert np.array_equal(uv.numpy(), w_uv.numpy())
    assert np.allclose(nz.numpy(), w_nz.numpy(), rtol=4 * U, atol=0)


def test_sine_source_draws_and_errors(ops, rng):
    f0 = draw(rng, 1, 10)
    a = ops.sine_source(f0, 100, 40000, generator=np.random.default_rng(5))[0].numpy()
    b = ops.sine_source(f0, 100, 40000, generator=np.random.default_rng(5))[0].numpy()
    assert np.array_equal(a, b) and np.std(a) > 0.01
    with pytest.raises(kcrt.Error, match="upp"):
        ops.sine_source(f0, 5000, 40000)
    with pytest.raises(kcrt.Error, match="2-D"):
        ops.sine_source(f0[0], 10, 40000)
    with pytest.raises(kcrt.Error, match="noise must be of shape"):
        ops.sine_source(f0, 10, 40000, noise=np.zeros((1, 99, 1), np.float32))
