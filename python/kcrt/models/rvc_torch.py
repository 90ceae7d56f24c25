"""RVC v2's NSF-HiFiGAN generator in plain PyTorch: the reference that
kcrt.models.rvc is proven against, and the PyTorch side of the
real-time-factor comparison.

The architecture is RVC's GeneratorNSF, SourceModuleHnNSF and ResBlock1
(infer_pack/models.py and modules.py of the RVC WebUI), written again
from that description: weight-normalised transposed convolutions and
residual convolutions (so a state dict has RVC's `weight_g`/`weight_v`
keys), plain conv_pre, noise_convs and conv_post, leaky ReLU 0.1 inside
and the default 0.01 before conv_post. One deliberate difference: the
sine source accumulates its phase in float64. RVC's float32 cumulative sum
over frames x upp samples drifts by up to that many units in the last
place of a turn (about 0.002 turns after a second at 40 kHz), which is
RVC's rounding, not the model; kc's sine_source is accurate to float32
per frame, and both are compared to the exact phase. Its random draws
(the noise) are arguments, so that kc and torch see the same ones.
"""
import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import weight_norm

LRELU_SLOPE = 0.1


def get_padding(kernel_size, dilation=1):
    return (kernel_size * dilation - dilation) // 2


class ResBlock1(nn.Module):
    def __init__(self, channels, kernel_size=3, dilation=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList([
            weight_norm(nn.Conv1d(channels, channels, kernel_size, 1, dilation=d, padding=get_padding(kernel_size, d)))
            for d in dilation])
        self.convs2 = nn.ModuleList([
            weight_norm(nn.Conv1d(channels, channels, kernel_size, 1, dilation=1, padding=get_padding(kernel_size)))
            for _ in dilation])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = c2(F.leaky_relu(c1(F.leaky_relu(x, LRELU_SLOPE)), LRELU_SLOPE))
            x = xt + x
        return x


def sine_waves(f0, upp, sampling_rate, sine_amp=0.1, noise_std=0.003, voiced_threshold=0.0, noise=None):
    """SineGen(sampling_rate, harmonic_num=0)(f0, upp) with the phase in
    float64: f0 (batch, frames) -> (batch, frames upp, 1). noise is the
    standard normal draw (batch, frames upp, 1); None draws none."""
    rad = torch.remainder(f0.float() / sampling_rate, 1.0)  # float32, as RVC
    phase = torch.cumsum(torch.repeat_interleave(rad.double(), upp, dim=1), dim=1) % 1.0
    uv = (f0 > voiced_threshold).float().repeat_interleave(upp, dim=1)
    sine = (sine_amp * torch.sin(2 * math.pi * phase)).float() * uv
    if noise is not None:
        amp = uv * noise_std + (1 - uv) * sine_amp / 3
        sine = sine + amp * noise[..., 0]
    return sine[..., None]


class SourceModuleHnNSF(nn.Module):
    def __init__(self, sampling_rate):
        super().__init__()
        self.sampling_rate = sampling_rate
        self.l_linear = nn.Linear(1, 1)

    def forward(self, f0, upp, noise=None):
        return torch.tanh(self.l_linear(sine_waves(f0, upp, self.sampling_rate, noise=noise)))


class GeneratorNSF(nn.Module):
    def __init__(self, initial_channel, resblock_kernel_sizes, resblock_dilation_sizes, upsample_rates,
                 upsample_initial_channel, upsample_kernel_sizes, gin_channels, sr):
        super().__init__()
        self.num_kernels = len(resblock_kernel_sizes)
        self.upp = int(np.prod(upsample_rates))
        self.m_source = SourceModuleHnNSF(sr)
        self.conv_pre = nn.Conv1d(initial_channel, upsample_initial_channel, 7, 1, padding=3)
        self.ups, self.noise_convs, self.resblocks = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        ch = upsample_initial_channel
        for i, (u, k) in enumerate(zip(upsample_rates, upsample_kernel_sizes)):
            ch = upsample_initial_channel // (2 ** (i + 1))
            self.ups.append(weight_norm(nn.ConvTranspose1d(2 * ch, ch, k, u, padding=(k - u) // 2)))
            if i + 1 < len(upsample_rates):
                s = int(np.prod(upsample_rates[i + 1:]))
                self.noise_convs.append(nn.Conv1d(1, ch, kernel_size=s * 2, stride=s, padding=s // 2))
            else:
                self.noise_convs.append(nn.Conv1d(1, ch, kernel_size=1))
            for k2, d in zip(resblock_kernel_sizes, resblock_dilation_sizes):
                self.resblocks.append(ResBlock1(ch, k2, d))
        self.conv_post = nn.Conv1d(ch, 1, 7, 1, padding=3, bias=False)
        if gin_channels:
            self.cond = nn.Conv1d(gin_channels, upsample_initial_channel, 1)

    def forward(self, x, f0, g=None, noise=None):
        har = self.m_source(f0, self.upp, noise).transpose(1, 2)
        x = self.conv_pre(x)
        if g is not None:
            x = x + self.cond(g)
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, LRELU_SLOPE)) + self.noise_convs[i](har)
            xs = None
            for j in range(self.num_kernels):
                r = self.resblocks[i * self.num_kernels + j](x)
                xs = r if xs is None else xs + r
            x = xs / self.num_kernels
        return torch.tanh(self.conv_post(F.leaky_relu(x)))


def from_config(cfg):
    """A GeneratorNSF of a kcrt.models.rvc config dict."""
    return GeneratorNSF(cfg["inter_channels"], cfg["resblock_kernel_sizes"], cfg["resblock_dilation_sizes"],
                        cfg["upsample_rates"], cfg["upsample_initial_channel"], cfg["upsample_kernel_sizes"],
                        cfg["gin_channels"], cfg["sr"])
