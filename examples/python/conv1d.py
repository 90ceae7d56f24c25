"""conv1d.py BUNDLE — a HiFi-GAN resblock's convolution through the shipped
kernel package (kernels/conv1d.kc): y = leaky_relu(conv1d(x, w) + b, 0.1)
with "same" padding, on numpy arrays, checked against numpy (and PyTorch's
torch.nn.functional.conv1d when it is installed). The second half keeps
the activations on the device as kcrt.Tensors, as a model would.

    kc build kernels/ -o rvc.kcb
    python3 examples/python/conv1d.py rvc.kcb

Exit status: 0 when it matches, 1 when not, 77 without a device.
"""
import sys

import numpy as np

import kcrt


def conv1d_numpy(x, w, b, dil, pad, slope):
    """The reference: NCW, batch 1, stride 1, zero padding, as torch's."""
    cout, cin, ks = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad)))
    t_out = xp.shape[1] - dil * (ks - 1)
    y = np.zeros((cout, t_out))
    for j in range(ks):
        y += w[:, :, j].astype(np.float64) @ xp[:, j * dil:j * dil + t_out]
    y += b[:, None]
    return np.where(y >= 0, y, slope * y)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        ctx = kcrt.open()
    except kcrt.Error as e:
        if e.status in ("KCRT_ERROR_NO_DEVICE", "KCRT_ERROR_NO_BACKEND"):
            print("conv1d.py: no device: %s" % e, file=sys.stderr)
            return 77
        raise
    conv = ctx.load(sys.argv[1]).kernel("conv1d")
    rng = np.random.default_rng()
    cin = cout = 64
    t_in, ks, dil = 2000, 7, 3
    pad = dil * (ks - 1) // 2  # "same"
    x = rng.standard_normal((cin, t_in)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, ks)) / np.sqrt(cin * ks)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    y = np.full((cout, t_in), np.nan, np.float32)  # poisoned: every element must be written

    conv(cin, cout, t_in, ks, dil, pad, 0.1, x, w, b, y)
    want = conv1d_numpy(x, w, b, dil, pad, 0.1)
    err = float(np.max(np.abs(y - want)) / np.max(np.abs(want)))
    ok = bool(np.all(np.isfinite(y))) and err < 1e-5
    print("conv1d %dx%d, %d steps, kernel %d, dilation %d: max error %.2e of the largest output vs numpy" % (
        cout, cin, t_in, ks, dil, err))
    try:
        import torch
        t = torch.nn.functional.conv1d(torch.from_numpy(x)[None], torch.from_numpy(w), torch.from_numpy(b),
                                       padding=pad, dilation=dil)
        t = torch.nn.functional.leaky_relu(t, 0.1)[0].numpy()
        terr = float(np.max(np.abs(y - t)) / np.max(np.abs(t)))
        ok = ok and terr < 1e-5
        print("  vs torch %s: %.2e" % (torch.__version__, terr))
    except ImportError:
        pass

    # on the device: two layers, one upload and one download
    tx, tw, tb = ctx.tensor(x), ctx.tensor(w), ctx.tensor(b)
    h = ctx.tensor(np.full((cout, t_in), np.nan, np.float32))
    out = ctx.tensor(np.full((cout, t_in), np.nan, np.float32))
    conv.launch(cin, cout, t_in, ks, dil, pad, 0.1, tx, tw, tb, h)
    conv.launch(cout, cout, t_in, ks, dil, pad, 0.1, h, tw, tb, out)
    ctx.finish()
    want2 = conv1d_numpy(want.astype(np.float32), w, b, dil, pad, 0.1)
    err2 = float(np.max(np.abs(out.numpy() - want2)) / np.max(np.abs(want2)))
    ok = ok and err2 < 1e-5
    print("  two layers on the device (kcrt.Tensor): %.2e" % err2)
    print("correct" if ok else "WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
