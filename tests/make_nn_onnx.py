#!/usr/bin/python3
"""make_nn_onnx.py: the small ONNX models of testdata/import/nn/models.

    /usr/bin/python3 tests/make_nn_onnx.py [DIR]

Writes into DIR (testdata/import/nn/models by default) the models of the
nn family's golden cases that ONNX's own node tests do not reach: older
opsets (BatchNormalization's spatial=0 and is_test, Gemm's legacy
broadcast, Softmax and Hardmax's 2-D coercion, LpPool's float p), ops used
before ONNX defined them, ceil_mode where ONNX and aicm's pools part, and a
few decompositions at sizes the node tests skip (grouped ConvTranspose with
output_padding, a CumSum over infs, an attention-like Einsum,
LayerNormalization of f64 stashed in f32).  Each model NAME.onnx that runs
comes with NAME_x.npy (its input; NAME_x2.npy... for more) and NAME_y.npy
(the result, computed here with numpy in float64 and rounded, following
ONNX's definition of the op, so the golden case compares aicm with an
independent reference).  The files are committed; run this again and
commit what changes when a case is added.  Deterministic: a fixed seed.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
D = TensorProto.DOUBLE
I64 = TensorProto.INT64
ET = {np.dtype(np.float32): F, np.dtype(np.float64): D, np.dtype(np.int64): I64}
rng = np.random.default_rng(17)
out = sys.argv[1] if len(sys.argv) > 1 else "testdata/import/nn/models"


def save(name, opset, nodes, ins, outs, inits=()):
    """ins, outs: [(name, array)]; arrays of ins are written as npy."""
    vi = [helper.make_tensor_value_info(n, ET[a.dtype], list(a.shape)) for n, a in ins]
    vo = [helper.make_tensor_value_info(n, ET[a.dtype], list(a.shape)) for n, a in outs]
    g = helper.make_graph(nodes, name, vi, vo,
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_nn_onnx")
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for k, (n, a) in enumerate(ins):
        np.save(os.path.join(out, "%s_%s.npy" % (name, n)), a)
    for n, a in outs:
        np.save(os.path.join(out, "%s_%s.npy" % (name, n)), np.ascontiguousarray(a))


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def node(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), **attrs)


def softmax2d(x, axis):
    z = x.astype(np.float64).reshape(int(np.prod(x.shape[:axis])), -1)
    e = np.exp(z - z.max(1, keepdims=True))
    return (e / e.sum(1, keepdims=True)).reshape(x.shape).astype(x.dtype)


def convtranspose2d(x, w, b, s, pads, op, g):
    """ONNX ConvTranspose by its definition: every input element scatters
    its kernel, then the pads crop (output_padding extends the end)."""
    n, c, h, wd = x.shape
    m = w.shape[1] * g
    kh, kw = w.shape[2:]
    full = np.zeros((n, m, (h - 1) * s[0] + kh + op[0], (wd - 1) * s[1] + kw + op[1]))
    cg, mg = c // g, m // g
    for gi in range(g):
        for ci in range(cg):
            for mo in range(mg):
                for i in range(h):
                    for j in range(wd):
                        full[:, gi * mg + mo, i * s[0]:i * s[0] + kh, j * s[1]:j * s[1] + kw] += \
                            x[:, gi * cg + ci, i, j, None, None] * w[gi * cg + ci, mo]
    y = full[:, :, pads[0]:full.shape[2] - pads[2], pads[1]:full.shape[3] - pads[3]]
    return (y + b[None, :, None, None]).astype(np.float32)


def main():
    os.makedirs(out, exist_ok=True)

    # BatchNormalization, opset 7, spatial=0: per-position operands
    x = f32(2, 3, 4, 5)
    s, b, mu = f32(3, 4, 5), f32(3, 4, 5), f32(3, 4, 5)
    var = (rng.random((3, 4, 5)) + 0.5).astype(np.float32)
    y = ((x - mu) / np.sqrt(var.astype(np.float64) + 1e-5) * s + b).astype(np.float32)
    save("bn_spatial0", 7, [node("BatchNormalization", "xsbmv", spatial=0)], [("x", x)],
         [("y", y)], [("s", s), ("b", b), ("m", mu), ("v", var)])
    # opset 6, is_test=0: training
    c3 = f32(3)
    save("bn_is_test0", 6, [node("BatchNormalization", "xsbmv", is_test=0)], [("x", x)],
         [("y", x)], [("s", c3), ("b", c3), ("m", c3), ("v", c3 * c3 + 1)])

    # Gemm before opset 7: broadcast=1 lets C (N,) broadcast, broadcast=0 does not
    a, bm, c = f32(3, 4), f32(4, 5), f32(5)
    save("gemm_legacy", 6, [node("Gemm", "abc", broadcast=1, beta=2.0, alpha=0.5)],
         [("a", a), ("b", bm), ("c", c)], [("y", (0.5 * (a.astype(np.float64) @ bm) + 2 * c)
                                              .astype(np.float32))])
    save("gemm_no_broadcast", 6, [node("Gemm", "abc")], [("a", a), ("b", bm), ("c", c)],
         [("y", a @ bm + c)])

    # Softmax and Hardmax before opset 13: the 2-D coercion at axis
    x = f32(2, 3, 4, 5)
    save("softmax_op11", 11, [node("Softmax", "x", axis=1)], [("x", x)], [("y", softmax2d(x, 1))])
    xq = (np.round(f32(2, 3, 4) * 2) / 2).astype(np.float32)
    z = xq.reshape(6, 4)
    hm = np.zeros_like(z)
    hm[np.arange(6), z.argmax(1)] = 1
    save("hardmax_op11", 11, [node("Hardmax", "x", axis=2)], [("x", xq)], [("y", hm.reshape(xq.shape))])

    # LpPool p=3 (opset 11) and GlobalLpPool with opset 1's float p
    x = f32(1, 2, 5, 6)
    xp = np.pad(np.abs(x.astype(np.float64)), ((0, 0), (0, 0), (1, 1), (0, 1)))
    lp = np.zeros((1, 2, 3, 6))
    for i in range(3):
        for j in range(6):
            lp[:, :, i, j] = (xp[:, :, 2 * i:2 * i + 3, j:j + 2] ** 3).sum((2, 3)) ** (1 / 3)
    save("lppool_p3", 11, [node("LpPool", "x", kernel_shape=[3, 2], p=3, strides=[2, 1],
                                pads=[1, 0, 1, 1])], [("x", x)], [("y", lp.astype(np.float32))])
    save("globallppool_op1", 1, [node("GlobalLpPool", "x", p=2.0)], [("x", x)],
         [("y", np.sqrt((x.astype(np.float64) ** 2).sum((2, 3), keepdims=True))
           .astype(np.float32))])

    # ceil_mode where ONNX keeps a last window that starts in the end padding
    x = f32(1, 1, 5, 5)
    save("maxpool_ceil_pad", 10, [node("MaxPool", "x", kernel_shape=[2, 2], strides=[2, 2],
                                       pads=[1, 1, 1, 1], ceil_mode=1)],
         [("x", x)], [("y", np.zeros((1, 1, 4, 4), np.float32))])

    # Einsum: before opset 12 it is not ONNX; an attention-like product
    q, k = f32(2, 3, 4, 5), f32(2, 3, 6, 5)
    save("einsum_op11", 11, [node("Einsum", "qk", equation="bhqd,bhkd->bhqk")],
         [("q", q), ("k", k)], [("y", np.einsum("bhqd,bhkd->bhqk", q, k))])
    save("einsum_attn", 12, [node("Einsum", "qk", equation="bhqd,bhkd->bhkq")],
         [("q", q), ("k", k)], [("y", np.einsum("bhqd,bhkd->bhkq", q.astype(np.float64), k)
                                      .astype(np.float32))])

    # CumSum, reverse and exclusive, an inf inside, the axis an initializer
    x = f32(3, 6)
    x[1, 2] = np.inf
    rev = np.flip(x, 1)
    ex = np.concatenate([np.zeros((3, 1), np.float32), np.cumsum(rev[:, :-1], 1)], 1)
    save("cumsum_rev_excl", 14, [node("CumSum", "xa", exclusive=1, reverse=1)], [("x", x)],
         [("y", np.flip(ex, 1))], [("a", np.array(-1, np.int64))])

    # LayerNormalization of f64 computed in f32 (stash_type 1), all three outputs
    x = rng.standard_normal((3, 4, 5))
    w, bb = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    x32 = x.astype(np.float32)
    mean = x32.mean((1, 2), keepdims=True, dtype=np.float64).astype(np.float32)
    d = x32 - mean
    inv = (1 / np.sqrt((d.astype(np.float64) ** 2).mean((1, 2), keepdims=True) + 1e-5)).astype(np.float32)
    save("layernorm_f64", 17, [node("LayerNormalization", "xwb", ("y", "mean", "inv"), axis=1)],
         [("x", x), ("w", w), ("b", bb)],
         [("y", (d * inv).astype(np.float64) * w + bb), ("mean", mean), ("inv", inv)])

    # ReduceMean of integers: aicm's mean takes floats
    xi = rng.integers(-5, 5, (3, 4)).astype(np.int64)
    save("reducemean_int", 13, [node("ReduceMean", "x", axes=[1])], [("x", xi)], [("y", xi[:, :1])])

    # ConvTranspose with groups, strides, output_padding and uneven pads
    x, w, b = f32(1, 4, 3, 4), f32(4, 3, 3, 2), f32(6)
    y = convtranspose2d(x, w, b, (2, 3), (1, 0, 0, 2), (1, 2), 2)
    save("convtranspose_groups", 11,
         [node("ConvTranspose", "xwb", strides=[2, 3], pads=[1, 0, 0, 2], output_padding=[1, 2],
               group=2)], [("x", x)], [("y", y)], [("w", w), ("b", b)])

    # A transformer's LayerNorm over the last axis, Y alone (row-fusion makes
    # it one kernel: testdata/fuse/layernorm-import.aicm): opset 17's op, and
    # the ops PyTorch exported before it (opset 13: ReduceMean, Sub, Pow 2,
    # ReduceMean, Add, Sqrt, Div, Mul, Add), on a row of 97
    x, w, bb = f32(2, 5, 97), f32(97), f32(97)
    z = x.astype(np.float64)
    zd = z - z.mean(-1, keepdims=True)
    y = (zd / np.sqrt((zd * zd).mean(-1, keepdims=True) + 1e-5) * w + bb).astype(np.float32)
    save("layernorm_last", 17, [node("LayerNormalization", "xwb", axis=-1)],
         [("x", x)], [("y", y)], [("w", w), ("b", bb)])
    save("layernorm_torch", 13,
         [node("ReduceMean", "x", ("m",), axes=[-1]), node("Sub", "xm", ("d",)),
          node("Pow", "dt", ("sq",)), node("ReduceMean", ("sq",), ("v",), axes=[-1]),
          node("Add", "ve", ("a",)), node("Sqrt", "a", ("s",)), node("Div", "ds", ("n",)),
          node("Mul", "nw", ("g",)), node("Add", "gb")],
         [("x", x)], [("y", y)],
         [("t", np.array(2, np.float32)), ("e", np.array(1e-5, np.float32)), ("w", w),
          ("b", bb)])


if __name__ == "__main__":
    main()
