#!/usr/bin/python3
"""make_bad_onnx.py: the small ONNX models of testdata/import/{errors,tool}.

    /usr/bin/python3 tests/make_bad_onnx.py [DIR]

Writes into DIR/errors (DIR: testdata/import by default) one .onnx file for
each way a model can be wrong, or beyond aicm, that aicm-import must refuse
with one located message (and the few good files their cases need next to
the bad ones); into DIR/tool the models of the tool's own cases (weights
written to .npy files, names made safe).  The files are committed, so the golden cases run without
python3-onnx; run this again (Debian's python3-onnx, /usr/bin/python3) and
commit what changes when a case is added.  Every model is built with
onnx.helper, which does not check it, so the faults stay as written; three
are bytes only: a model cut short, random bytes, and messages nested too
deep (written in the protobuf wire format by hand, since the protobuf
library would refuse to build them).  Everything is deterministic: the
random bytes come from a fixed seed.
"""
import os
import random
import struct
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=13, domains=(), name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    return helper.make_model(g, opset_imports=ops, producer_name="make_bad_onnx")


def vi(name, et, shape):
    return helper.make_tensor_value_info(name, et, shape)


def relu(opset=13, xshape=(2, 3), xtype=F, **attrs):
    return model([helper.make_node("Relu", ["x"], ["y"], name="r", **attrs)],
                 [vi("x", xtype, list(xshape))], [vi("y", xtype, list(xshape))], opset=opset)


def add_init(init, shape=(2, 3), et=F):
    """y = x + w, w the initializer given."""
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="a")],
                 [vi("x", et, list(shape))], [vi("y", et, list(shape))], [init])


def tensor(name, et, dims, vals):
    """A TensorProto with these dims and values, matching or not."""
    t = helper.make_tensor(name, et, [len(vals)], vals=vals)
    t.dims[:] = dims
    return t


def external(location, offset=None, length=None, shape=(2, 3)):
    t = tensor("w", F, list(shape), [])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return add_init(t, shape)


def varint(v):
    b = bytearray()
    while True:
        c = v & 0x7f
        v >>= 7
        b.append(c | (0x80 if v else 0))
        if not v:
            return bytes(b)


def field(num, payload):
    """A length-delimited field (wire type 2)."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def nested(depth):
    """A model whose graph's node has a GRAPH attribute whose graph's node
    has one ... depth graphs below the top one, each three messages below the
    last (so the innermost is 2 + 3 * depth levels down, the model being 1):
    ModelProto.graph = 7, GraphProto.node = 1, NodeProto.attribute = 5,
    AttributeProto.g = 6."""
    g = b""
    for _ in range(depth):
        g = field(1, field(5, field(6, g)))
    opset = field(8, varint(2 << 3 | 0) + varint(13))
    return varint(1 << 3 | 0) + varint(8) + opset + field(7, g)


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "testdata/import"
    out = os.path.join(top, "errors")
    os.makedirs(out, exist_ok=True)
    os.makedirs(os.path.join(top, "tool"), exist_ok=True)
    files = {}

    def put(name, m):
        files[name] = m if isinstance(m, bytes) else m.SerializeToString()

    good = relu()
    put("relu.onnx", good)
    # the file itself
    b = good.SerializeToString()
    put("truncated.onnx", b[:len(b) * 2 // 3])
    put("corrupt.onnx", bytes(random.Random(17).getrandbits(8) for _ in range(96)))
    put("empty.onnx", b"")
    put("nested.onnx", nested(33))
    put("nested-ok.onnx", nested(32))
    # opsets
    for v in (0, 18, 99):
        put("opset%d.onnx" % v, relu(opset=v))
    m = relu()
    del m.opset_import[:]
    put("no-opset.onnx", m)
    # ops
    put("nonzero.onnx", model([helper.make_node("NonZero", ["x"], ["y"], name="nz")],
                              [vi("x", F, [2, 3])], [vi("y", I64, [2, 6])], opset=13))
    put("unknown-op.onnx", model([helper.make_node("NoSuchOp", ["x"], ["y"], name="ns")],
                                 [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], opset=13))
    put("domain.onnx", model([helper.make_node("FusedMatMul", ["x", "x"], ["y"], name="fm",
                                               domain="com.microsoft")],
                             [vi("x", F, [3, 3])], [vi("y", F, [3, 3])],
                             domains=["com.microsoft"]))
    put("attr-unread.onnx", relu(alpha=0.5))
    put("attr-type.onnx", model([helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                                  axis=1.0)],
                                [vi("x", F, [2, 3])], [vi("y", F, [2, 3])]))
    put("no-op-type.onnx", model([helper.make_node("", ["x"], ["y"], name="blank")],
                                 [vi("x", F, [2, 3])], [vi("y", F, [2, 3])]))
    # values
    put("undefined.onnx", model([helper.make_node("Relu", ["ghost"], ["y"], name="r")],
                                [vi("x", F, [2, 3])], [vi("y", F, [2, 3])]))
    put("twice.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                             helper.make_node("Neg", ["x"], ["y"], name="r2")],
                            [vi("x", F, [2, 3])], [vi("y", F, [2, 3])]))
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    m = add_init(w)
    m.graph.initializer.append(numpy_helper.from_array(np.zeros((2, 3), np.float32), "w"))
    put("init-twice.onnx", m)
    put("no-output.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                                [vi("x", F, [2, 3])], [vi("z", F, [2, 3])]))
    # shapes
    put("dynamic.onnx", relu(xshape=("N", 3)))
    m = relu()
    m.graph.input[0].type.tensor_type.shape.dim[0].Clear()
    put("unset-dim.onnx", m)
    m = relu()
    m.graph.input[0].type.tensor_type.ClearField("shape")
    put("no-shape.onnx", m)
    put("zero-dim.onnx", relu(xshape=(0, 3)))
    put("neg-dim.onnx", relu(xshape=(-2, 3)))
    # --bind: a Reshape whose shape is a graph input
    put("reshape.onnx", model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="rs")],
                              [vi("x", F, [2, 3]), vi("shape", I64, [2])],
                              [vi("y", F, [3, 2])]))
    np.save(os.path.join(out, "shape-ok.npy"), np.array([3, 2], np.int64))
    np.save(os.path.join(out, "shape-f64.npy"), np.array([3, 2], np.float64))
    np.save(os.path.join(out, "shape-3.npy"), np.array([3, 2, 1], np.int64))
    # element types
    put("float16.onnx", relu(xtype=TensorProto.FLOAT16))
    put("string.onnx", relu(xtype=TensorProto.STRING))
    put("init-uint8.onnx", model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="a")],
        [vi("x", F, [2, 3])], [vi("y", F, [2, 3])],
        [numpy_helper.from_array(np.ones((2, 3), np.uint8), "w")]))
    # initializers whose data do not match their dims
    t = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    t.raw_data = t.raw_data[:20]
    put("raw-short.onnx", add_init(t))
    t = tensor("w", F, [2, 3], [1, 2, 3, 4, 5])
    put("typed-short.onnx", add_init(t))
    t = tensor("w", F, [2, 3], [1, 2, 3, 4, 5, 6, 7])
    put("typed-long.onnx", add_init(t))
    t = tensor("w", I64, [2, 3], [1, 2, 3, 4, 5, 6, 7])
    put("int64-long.onnx", model([helper.make_node("Add", ["x", "w"], ["y"], name="a")],
                                 [vi("x", I64, [2, 3])], [vi("y", I64, [2, 3])], [t]))
    put("init-zero.onnx", add_init(tensor("w", F, [0, 3], [])))
    # before IR version 4 an initializer is listed as a graph input too
    m = add_init(numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w"))
    m.ir_version = 3
    m.graph.input.append(vi("w", F, [2, 3]))
    put("init-input.onnx", m)
    # external data
    with open(os.path.join(out, "ext-ok.bin"), "wb") as f:
        f.write(b"\0" * 8 + struct.pack("<6f", 1, 2, 3, 4, 5, 6))
    put("ext-ok.onnx", external("ext-ok.bin", offset=8, length=24))
    put("ext-missing.onnx", external("no-such-weights.bin"))
    put("ext-absolute.onnx", external("/etc/passwd"))
    put("ext-dotdot.onnx", external("../errors/ext-ok.bin", offset=8))
    put("ext-short.onnx", external("ext-ok.bin", offset=16))
    put("ext-length.onnx", external("ext-ok.bin", offset=8, length=20))
    put("ext-offset.onnx", external("ext-ok.bin", offset="eight"))
    put("ext-no-location.onnx", external(None, offset=8))
    put("ext-folder.onnx", external("."))
    # the tool: y = relu(x @ W + b) + c, W of 8 x 16 (a .npy file), b of 16
    # and c a splat of 8 x 16 (inline), names that must be made safe
    rng = np.random.default_rng(5)
    W = numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "fc.weight")
    b = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "fc.bias")
    c = numpy_helper.from_array(np.full((8, 16), 0.5, np.float32), "/c/const_output_0")
    files["../tool/weights.onnx"] = model(
        [helper.make_node("MatMul", ["input:0", "fc.weight"], ["/fc/MatMul_output_0"]),
         helper.make_node("Add", ["/fc/MatMul_output_0", "fc.bias"], ["/fc/Add_output_0"]),
         helper.make_node("Relu", ["/fc/Add_output_0"], ["/act/Relu_output_0"]),
         helper.make_node("Add", ["/act/Relu_output_0", "/c/const_output_0"], ["1"])],
        [vi("input:0", F, [8, 8])], [vi("1", F, [8, 16]), vi("/fc/Add_output_0", F, [8, 16])],
        [W, b, c], name="tool-test").SerializeToString()
    # its input and both outputs as numpy computes them, for aicm-run
    x = rng.standard_normal((8, 8)).astype(np.float32)
    add = x @ numpy_helper.to_array(W) + numpy_helper.to_array(b)
    np.save(os.path.join(top, "tool", "x.npy"), x)
    np.save(os.path.join(top, "tool", "add.npy"), add)
    np.save(os.path.join(top, "tool", "y.npy"), np.maximum(add, 0) + np.float32(0.5))
    for name, b in sorted(files.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(b)


if __name__ == "__main__":
    main()
