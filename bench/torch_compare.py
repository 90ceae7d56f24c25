#!/usr/bin/env python3
"""torch_compare.py — the same operations as kc bench measured, through
PyTorch, at the same shapes; one table of kc / PyTorch time ratios.

    python3 bench/torch_compare.py --kc vulkan=kc_vulkan.json [--kc cuda=kc_cuda.json]
                                   [--repeat 50] [--markdown FILE] [--json FILE]

Each --kc file is a `kc bench --json` result; its benchmarks (kernel,
shape, median time per launch) say what to run. PyTorch runs each one on
the GPU (cuBLAS torch.matmul and torch.mv, cuDNN conv1d and
conv_transpose1d, torch.softmax, layer_norm), timed like kc: CUDA events
around each call after a warm-up, the median of --repeat calls. FP32 on
both sides: TF32 is turned off for cuBLAS and cuDNN (kc's kernels do FP32
multiply-adds); cudnn.benchmark picks cuDNN's fastest algorithm.

Scalars kc bench does not take from the shape are set as kc bench (and
kc tune) set them, and PyTorch does the same work: bools true (gemm and
gemv add their bias), floats 0.75 (saxpy's a; conv1d's slope: a leaky ReLU
after the convolution; gemm's alpha, the leaky slope of act 3; layernorm's
eps). A kernel this script does not know is listed without a PyTorch time.
A ratio above 1 means kc is slower.
"""
import argparse
import json
import math
import statistics
import sys


def parse_shape(text):
    out = {}
    for item in text.split(","):
        k, v = item.split("=")
        out[k] = int(v) if v.lstrip("-").isdigit() else float(v)
    return out


FLOAT_SCALAR = 0.75  # kc bench's and kc tune's value for a float scalar the shape does not give


def ops(torch, dev):
    """kernel name -> (shape -> (description, callable)); inputs are made once."""
    F = torch.nn.functional
    f = FLOAT_SCALAR

    def rnd(*shape):
        return torch.rand(*shape, device=dev, dtype=torch.float32) * 2 - 1

    def saxpy(s):  # y = a x + y
        x, y = rnd(s["n"]), rnd(s["n"])
        return "torch.add(y, x, alpha=a, out=y)", lambda: torch.add(y, x, alpha=f, out=y)

    def gemm(s):  # has_bias true: C = act(A B + bias)
        a, b, bias = rnd(s["M"], s["K"]), rnd(s["K"], s["N"]), rnd(s["N"])
        c = torch.empty(s["M"], s["N"], device=dev)
        act = s.get("act", 0)
        post = {1: ("relu_", lambda: c.relu_()), 2: ("gelu tanh", lambda: F.gelu(c, approximate="tanh")),
                3: ("leaky_relu", lambda: F.leaky_relu(c, f, inplace=True))}.get(act)

        def run():
            torch.addmm(bias, a, b, out=c)
            if post:
                post[1]()
        return "torch.addmm" + (" + " + post[0] if post else ""), run

    def linear(s):  # has_bias true: y = act(x W^T + bias), W as torch keeps it
        x, w, bias = rnd(s["M"], s["K"]), rnd(s["N"], s["K"]), rnd(s["N"])
        act = s.get("act", 0)
        post = {1: ("relu", F.relu), 2: ("gelu tanh", lambda y: F.gelu(y, approximate="tanh")),
                3: ("leaky_relu", lambda y: F.leaky_relu(y, f))}.get(act)
        if post:
            return "F.linear + " + post[0], lambda: post[1](F.linear(x, w, bias))
        return "F.linear", lambda: F.linear(x, w, bias)

    def gemv_f16(s):  # one float16 row: F.linear as a decode step calls it
        w, x, bias = (t.half() for t in (rnd(s["N"], s["K"]), rnd(1, s["K"]), rnd(s["N"])))
        return "F.linear, one row (float16)", lambda: F.linear(x, w, bias)

    def linear_f16(s):
        x, w, bias = (t.half() for t in (rnd(s["M"], s["K"]), rnd(s["N"], s["K"]), rnd(s["N"])))
        return "F.linear (float16)", lambda: F.linear(x, w, bias)

    def matmul(s):  # bench/kernels' matmul(m, n, k)
        a, b = rnd(s["m"], s["k"]), rnd(s["k"], s["n"])
        c = torch.empty(s["m"], s["n"], device=dev)
        return "torch.matmul", lambda: torch.matmul(a, b, out=c)

    def bmm(s):  # act 0, no bias (kc.yaml's shapes); a stride of 0 is a broadcast operand
        bt = s["batch"]
        a = rnd(1 if s["sa"] == 0 else bt, s["M"], s["K"]).expand(bt, s["M"], s["K"])
        b = rnd(1 if s["sb"] == 0 else bt, s["K"], s["N"]).expand(bt, s["K"], s["N"])
        c = torch.empty(bt, s["M"], s["N"], device=dev)
        return "torch.bmm", lambda: torch.bmm(a, b, out=c)

    def gemv(s):  # has_bias true: y = W x + bias
        w, x, bias = rnd(s["N"], s["K"]), rnd(s["K"]), rnd(s["N"])
        y = torch.empty(s["N"], device=dev)
        return "torch.addmv", lambda: torch.addmv(bias, w, x, out=y)

    def softmax(s):
        x = rnd(s["rows"], s["n"])
        return "torch.softmax(dim=-1)", lambda: torch.softmax(x, dim=-1)

    def layernorm(s):
        x, g, b = rnd(s["rows"], s["n"]), rnd(s["n"]), rnd(s["n"])
        return "F.layer_norm", lambda: F.layer_norm(x, (s["n"],), g, b, eps=f)

    def conv1d(s):
        if "ch" in s:  # bench/kernels' depthwise conv1d(ch, t_out, ks), "valid"
            x, w = rnd(1, s["ch"], s["t_out"] + s["ks"] - 1), rnd(s["ch"], 1, s["ks"])
            return "F.conv1d groups=ch", lambda: F.conv1d(x, w, groups=s["ch"])
        x, w, b = rnd(1, s["cin"], s["t_in"]), rnd(s["cout"], s["cin"], s["ks"]), rnd(s["cout"])
        return "F.conv1d + leaky_relu", lambda: F.leaky_relu(
            F.conv1d(x, w, b, padding=s["pad"], dilation=s["dil"]), f, inplace=True)

    def conv_transpose1d(s):
        g = s.get("groups", 1)
        x, w, b = rnd(1, s["cin"], s["t_in"]), rnd(s["cin"], s["cout"] // g, s["ks"]), rnd(s["cout"])
        return "F.conv_transpose1d", lambda: F.conv_transpose1d(
            x, w, b, stride=s["stride"], padding=s["pad"], output_padding=s["out_pad"], groups=g)

    def attention(s, dtype=torch.float32):  # also attention_decode: the same op
        bh, lq, lk = s["bh"], s["lq"], s["lk"]
        # (batch 1, heads bh, ...): SDPA's fused backends take 4-D inputs only, and
        # a 3-D call ran its MATH fallback on an H200 (a model's call is 4-D)
        q, k, v = (rnd(1, bh, n, s[e]).to(dtype) for n, e in ((lq, "d"), (lk, "d"), (lk, "dv")))
        mask = {0: None, 1: rnd(lq, lk), 2: rnd(1, bh, lq, lk)}[s.get("mask_mode", 0)]
        mask = mask.to(dtype) if mask is not None else None
        causal = bool(s.get("causal", 0))
        if hasattr(F, "scaled_dot_product_attention"):
            return "F.scaled_dot_product_attention", lambda: F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=causal)
        scale = 1 / math.sqrt(s["d"])  # torch < 2.0: the formula

        def formula():
            sc = torch.matmul(q, k.transpose(-2, -1)) * scale
            if causal:
                sc = sc.masked_fill(~torch.ones(lq, lk, dtype=torch.bool, device=dev).tril(), float("-inf"))
            return torch.matmul(torch.softmax(sc if mask is None else sc + mask, dim=-1), v)
        return "softmax(q k^T scale + mask) v", formula

    def gemm_f16(s):  # has_bias true, no activation
        a, b, bias = (t.half() for t in (rnd(s["M"], s["K"]), rnd(s["K"], s["N"]), rnd(s["N"])))
        c = torch.empty(s["M"], s["N"], device=dev, dtype=torch.float16)
        return "torch.addmm (float16)", lambda: torch.addmm(bias, a, b, out=c)

    def conv1d_f16(s):
        x, w, b = (t.half() for t in (rnd(1, s["cin"], s["t_in"]), rnd(s["cout"], s["cin"], s["ks"]), rnd(s["cout"])))
        return "F.conv1d + leaky_relu (float16)", lambda: F.leaky_relu(
            F.conv1d(x, w, b, padding=s["pad"], dilation=s["dil"]), f, inplace=True)

    def half_attention(s):
        what, fn = attention(s, torch.float16)
        return what + " (float16)", fn

    return {"saxpy": saxpy, "gemm": gemm, "matmul": matmul, "bmm": bmm, "gemv": gemv, "softmax": softmax,
            "layernorm": layernorm, "conv1d": conv1d, "conv_transpose1d": conv_transpose1d,
            "attention": attention, "attention_decode": attention,
            "attention_f16": half_attention, "attention_decode_f16": half_attention,
            "gemm_f16": gemm_f16, "conv1d_f16": conv1d_f16, "linear": linear, "linear_f16": linear_f16,
            "gemv_f16": gemv_f16}


def time_ms(torch, fn, repeat, dev):
    for _ in range(10):
        fn()
    times = []
    if dev == "cpu":  # only for checking this script where there is no GPU
        import time
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)
    torch.cuda.synchronize()
    for _ in range(repeat):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def sdpa_backends(torch, fn, repeat, dev):
    """F.scaled_dot_product_attention picks a backend by its own rules, and
    two runs at one shape took 115 and 208 us on an H200: the time of each
    backend alone says which one the row's figure is. name -> ns, or the
    reason it did not run (FLASH_ATTENTION takes no float32)."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return {}
    out = {}
    for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
        backend = getattr(SDPBackend, name, None)
        if backend is None:
            continue
        try:
            with sdpa_kernel([backend]), torch.no_grad():
                out[name] = time_ms(torch, fn, repeat, dev) * 1e6
        except RuntimeError as e:
            out[name] = "not run: " + str(e).splitlines()[0][:60]
    return out


def fmt_ns(ns):
    if ns is None:
        return "-"
    return f"{ns / 1e3:.1f} us" if ns < 1e6 else f"{ns / 1e6:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kc", action="append", required=True, metavar="LABEL=FILE",
                    help="a kc bench --json result and its column's label (vulkan, cuda)")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--markdown", metavar="FILE")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu only checks this script on a machine without a GPU (no comparison to speak of)")
    args = ap.parse_args()

    columns = []
    for item in args.kc:
        label, _, path = item.partition("=")
        with open(path) as f:
            columns.append((label, json.load(f)))
    rows = {}  # (kernel, shape) -> {label: ns}
    for label, run in columns:
        for b in run["benchmarks"]:
            if "median_ns" in b and b["median_ns"]:
                rows.setdefault((b["kernel"], b["shape"]), {})[label] = b["median_ns"]

    try:
        import torch
    except ImportError:
        print("torch_compare: PyTorch is not installed (pip install torch); kc's times only", file=sys.stderr)
        torch = None
    if torch is not None and args.device == "cuda" and not torch.cuda.is_available():
        print("torch_compare: PyTorch sees no CUDA device; kc's times only", file=sys.stderr)
        torch = None
    table, known, backends = [], ops(torch, args.device) if torch else {}, {}
    if torch:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    for (kernel, shape), kc in rows.items():
        desc, ns = "-", None
        if kernel in known:
            desc, fn = known[kernel](parse_shape(shape))
            try:
                with torch.no_grad():
                    ns = time_ms(torch, fn, args.repeat, args.device) * 1e6
            except RuntimeError as e:  # e.g. float16 matmul on an old CPU build
                desc = "%s: not run (%s)" % (desc, str(e).splitlines()[0])
            if ns and desc.startswith("F.scaled_dot_product_attention"):
                backends[(kernel, shape)] = sdpa_backends(torch, fn, args.repeat, args.device)
        table.append({"kernel": kernel, "shape": shape, "torch_op": desc, "torch_ns": ns,
                      **{f"kc_{label}_ns": kc.get(label) for label, _ in columns},
                      **{f"{label}_over_torch": (kc[label] / ns if ns and kc.get(label) else None)
                         for label, _ in columns},
                      "sdpa_backends_ns": backends.get((kernel, shape))})

    labels = [label for label, _ in columns]
    head = ["kernel", "shape"] + [f"kc {l}" for l in labels] + ["PyTorch", "PyTorch op"] + [f"{l} / PyTorch" for l in labels]
    lines = []
    for r in table:
        ratio = [f'{r[f"{l}_over_torch"]:.2f}' if r[f"{l}_over_torch"] else "-" for l in labels]
        lines.append([r["kernel"], r["shape"]] + [fmt_ns(r[f"kc_{l}_ns"]) for l in labels]
                     + [fmt_ns(r["torch_ns"]), r["torch_op"]] + ratio)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    for row in [head] + lines:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    devices = "; ".join(f'kc {label} on {run.get("device", {}).get("name", "?")}' for label, run in columns)
    about = (f"{devices}; PyTorch {torch.__version__} on {args.device}, CUDA {torch.version.cuda}, "
             f"cuDNN {torch.backends.cudnn.version()}; FP32, TF32 off; median of {args.repeat}; "
             "ratio > 1: kc slower") if torch else f"{devices}; no PyTorch on CUDA here"
    print(about)
    notes = ["SDPA's backends alone, %s %s: %s" % (k, sh, ", ".join(
        f"{name.lower()} {fmt_ns(v) if isinstance(v, float) else v}" for name, v in b.items()))
        for (k, sh), b in backends.items() if b]
    for n in notes:
        print(n)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"| {' | '.join(head)} |\n|{'---|' * len(head)}\n")
            for row in lines:
                f.write(f"| {' | '.join(str(x).replace('|', chr(92) + '|') for x in row)} |\n")
            f.write(f"\n{about}\n")
            for n in notes:
                f.write(f"\n{n}\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"about": about, "rows": table}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
