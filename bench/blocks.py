#!/usr/bin/python3
"""blocks.py: the numpy and PyTorch sides of `make bench`'s transformer blocks (bench/blocks.sh).

    blocks.py gen DIR MODELS              inputs and f64 references for every block, in DIR/BLOCK/
    blocks.py numpy DIR BLOCK REPS        numpy's median of REPS runs after a warm-up
    blocks.py torch DIR BLOCK REPS        PyTorch eager's median, the same way
    blocks.py err DIR BLOCK OUT           DESIGN section 7's error of OUT/y.npy against the reference
    blocks.py stats FILE                  kernels and bytes (read + written) of aicm-run --stats=json

Blocks (issue 19 item 6), f32: layernorm and rmsnorm on x (4096, 1024) with
gamma (and beta) of (1024,); attention softmax(Q Kᵀ / 8) V with Q, K, V of
(N, 64) for N = 2048 and 8192 (attention-2048, attention-8192); transformer,
the TransformerEncoderLayer of scripts/export-models.py (d_model 256, 4 heads,
feed-forward 2048, post-norm, batch_first, input (1, 128, 256)), whose
exported .onnx, .in.npy and .out.npy tests/models.sh leaves in MODELS.

The reference of a block is numpy in f64 on the same f32 inputs (the
transformer's is torch eager's own output, MODELS/transformer.out.npy, as
tests/models.sh compares it).  numpy's timed side is the same computation
in f32, written as one would: for the norms the ops of the .aicm graph, for
attention two matmuls around a softmax, for the transformer the layer's
equations on the model's own weights (saved by gen).  PyTorch's timed side
is eager under torch.inference_mode() with torch.set_num_threads(1) (DESIGN
section 16): torch.nn.functional.layer_norm; RMSNorm as its usual eager
composition (torch 1.13 has no rms_norm); attention as softmax(q @ k.T / 8)
@ v (torch 1.13 has no scaled_dot_product_attention); the layer itself
called as models.py calls it.  One thread: bench/blocks.sh sets
OPENBLAS_NUM_THREADS=1 and the OpenBLAS kernel (DESIGN section 11).
"""
import json
import os
import statistics
import sys
import time

import numpy as np

from models import export_module  # bench/models.py: scripts/export-models.py as a module

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKS = ("layernorm", "rmsnorm", "attention-2048", "attention-8192", "transformer")
EPS = 1e-5


def attn_n(block):
    return int(block.split("-")[1])


def load(d, block):
    b = os.path.join(d, block)
    return {f[:-4]: np.load(os.path.join(b, f)) for f in sorted(os.listdir(b))
            if f.endswith(".npy") and f not in ("ref.npy",)}


# ---- the computations, in any float type --------------------------------------

def layernorm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=-1, keepdims=True)
    return d / np.sqrt(var + x.dtype.type(EPS)) * gamma + beta


def rmsnorm(x, gamma):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + x.dtype.type(EPS)) * gamma


def attention(q, k, v):
    s = (q @ k.T) * q.dtype.type(0.125)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def transformer(x, w):
    """nn.TransformerEncoderLayer(256, 4, batch_first=True) in eval mode:
    post-norm, relu, no dropout."""
    t = x[0]                                         # (128, 256)
    h, dh = 4, 64
    qkv = t @ w["in_w"].T + w["in_b"]
    q, k, v = (qkv[:, i * 256:(i + 1) * 256].reshape(128, h, dh).transpose(1, 0, 2)
               for i in range(3))
    s = (q @ k.transpose(0, 2, 1)) * t.dtype.type(1 / 8)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    o = ((e / e.sum(axis=-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(128, 256)
    a = o @ w["out_w"].T + w["out_b"]
    n1 = layernorm(t + a, w["n1_w"], w["n1_b"])
    f = np.maximum(n1 @ w["l1_w"].T + w["l1_b"], 0) @ w["l2_w"].T + w["l2_b"]
    return layernorm(n1 + f, w["n2_w"], w["n2_b"])[None]


def compute(block, a, dt):
    c = {k: v.astype(dt) for k, v in a.items()}
    if block == "layernorm":
        return layernorm(c["x"], c["gamma"], c["beta"])
    if block == "rmsnorm":
        return rmsnorm(c["x"], c["gamma"])
    if block.startswith("attention"):
        return attention(c["q"], c["k"], c["v"])
    w = {k[2:]: v for k, v in c.items() if k.startswith("w_")}
    return transformer(c["x"], w)


# ---- gen, numpy, torch, err ---------------------------------------------------

def gen(d, models):
    rng = np.random.default_rng(19)
    ins = {"layernorm": {"x": (4096, 1024), "gamma": (1024,), "beta": (1024,)},
           "rmsnorm": {"x": (4096, 1024), "gamma": (1024,)}}
    for n in (2048, 8192):
        ins["attention-%d" % n] = {"q": (n, 64), "k": (n, 64), "v": (n, 64)}
    for block, shapes in ins.items():
        b = os.path.join(d, block)
        os.makedirs(b, exist_ok=True)
        a = {}
        for name, shape in shapes.items():
            a[name] = rng.uniform(-1, 1, shape).astype(np.float32)
            if name == "gamma":
                a[name] = a[name] * np.float32(0.25) + np.float32(1)
            np.save(os.path.join(b, name + ".npy"), a[name])
        np.save(os.path.join(b, "ref.npy"), compute(block, a, np.float64))
    # the transformer: torch's input and output, and its weights for numpy
    import torch
    b = os.path.join(d, "transformer")
    os.makedirs(b, exist_ok=True)
    model, _ = export_module().build("transformer")
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    names = {"in_w": "self_attn.in_proj_weight", "in_b": "self_attn.in_proj_bias",
             "out_w": "self_attn.out_proj.weight", "out_b": "self_attn.out_proj.bias",
             "l1_w": "linear1.weight", "l1_b": "linear1.bias",
             "l2_w": "linear2.weight", "l2_b": "linear2.bias",
             "n1_w": "norm1.weight", "n1_b": "norm1.bias",
             "n2_w": "norm2.weight", "n2_b": "norm2.bias"}
    for short, full in names.items():
        np.save(os.path.join(b, "w_" + short + ".npy"), sd[full].astype(np.float32))
    np.save(os.path.join(b, "x.npy"), np.load(os.path.join(models, "transformer.in.npy")))
    np.save(os.path.join(b, "ref.npy"), np.load(os.path.join(models, "transformer.out.npy")))
    # numpy's own layer in f64 must agree with torch's output, or its time
    # would be the time of something else
    e = error(compute("transformer", load(d, "transformer"), np.float64),
              np.load(os.path.join(b, "ref.npy")))
    if e > 1e-4:
        raise SystemExit("blocks.py: numpy's transformer layer differs from torch's output "
                         "(error %.3g, expected <= 1e-4)" % e)
    del torch


def median_ms(f, reps):
    f()                                  # warm-up
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, r


def error(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1.0))


def run_numpy(d, block, reps):
    a = {k: v.astype(np.float32) for k, v in load(d, block).items()}
    ms, y = median_ms(lambda: compute(block, a, np.float32), reps)
    e = error(y, np.load(os.path.join(d, block, "ref.npy")))
    print("numpy %s: median %.3f ms, err %.3g" % (np.__version__, ms, e))


def run_torch(d, block, reps):
    import torch
    torch.set_num_threads(1)
    a = {k: torch.from_numpy(v) for k, v in load(d, block).items()}
    if block == "layernorm":
        def f():
            return torch.nn.functional.layer_norm(a["x"], (1024,), a["gamma"], a["beta"], EPS)
    elif block == "rmsnorm":
        def f():
            x = a["x"]
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * a["gamma"]
    elif block.startswith("attention"):
        def f():
            return torch.softmax((a["q"] @ a["k"].T) / 8, dim=-1) @ a["v"]
    else:
        model, _ = export_module().build("transformer")

        def f():
            return model(a["x"])
    with torch.inference_mode():
        f()                              # a second warm-up beside median_ms's
        ms, y = median_ms(f, reps)
    e = error(y.numpy(), np.load(os.path.join(d, block, "ref.npy")))
    print("torch %s: median %.3f ms, err %.3g" % (torch.__version__, ms, e))


def err(d, block, out):
    print("err %.3g" % error(np.load(os.path.join(out, "y.npy")),
                             np.load(os.path.join(d, block, "ref.npy"))))


def stats(path):
    """The first JSON object in aicm-run's output that has "kernels" and
    "total" (its --stats=json, on one line or several)."""
    with open(path) as f:
        text = f.read()
    dec, s, at = json.JSONDecoder(), None, 0
    while s is None:
        at = text.find("{", at)
        if at < 0:
            raise SystemExit("blocks.py: no --stats=json object in '%s'" % path)
        try:
            o, _ = dec.raw_decode(text[at:])
            if isinstance(o, dict) and "kernels" in o and "total" in o:
                s = o
        except ValueError:
            pass
        at += 1
    t = s["total"]
    print("%d %d %d" % (len(s["kernels"]), t["dram__bytes_read.sum"] + t["dram__bytes_write.sum"],
                        t["ideal_bytes_read"] + t["ideal_bytes_write"]))


def main(argv):
    if len(argv) == 3 and argv[0] == "gen":
        gen(argv[1], argv[2])
    elif len(argv) == 4 and argv[0] in ("numpy", "torch") and argv[2] in BLOCKS:
        (run_numpy if argv[0] == "numpy" else run_torch)(argv[1], argv[2], int(argv[3]))
    elif len(argv) == 4 and argv[0] == "err" and argv[2] in BLOCKS:
        err(argv[1], argv[2], argv[3])
    elif len(argv) == 2 and argv[0] == "stats":
        stats(argv[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
