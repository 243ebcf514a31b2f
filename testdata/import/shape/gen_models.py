#!/usr/bin/python3
"""gen_models.py: the tiny ONNX models of the shape family's golden tests.

Each model exercises one translator of src/import/ops_shape.c at an opset
whose form the libonnx-testdata node tests do not cover (attributes that
later became inputs), or a fold the importer must do (a PyTorch-style
Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain, a transposed
weight), or an error it must give.  Beside each NAME.onnx it writes the
input NAME.x.npy and numpy's result NAME.y.npy, so the golden test both
shows the aicm graph and checks its numbers with aicm-run.  Run it with
Debian's /usr/bin/python3 (python3-onnx, python3-numpy) from this folder;
the files it writes are committed, so the tests need neither.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.bool_): TensorProto.BOOL}


def model(name, opset, nodes, x, outs, inits=()):
    """Writes NAME.onnx (graph input x unless None, outputs outs: a list of
    (name, numpy result)) and its .npy files."""
    ins = [] if x is None else [helper.make_tensor_value_info('x', TYPES[x.dtype], x.shape)]
    g = helper.make_graph(
        nodes, name.replace('-', '_'), ins,
        [helper.make_tensor_value_info(n, TYPES[v.dtype], v.shape) for n, v in outs],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='gen_models.py')
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + '.onnx'))
    if x is not None:
        np.save(os.path.join(HERE, name + '.x.npy'), x)
    for n, v in outs:
        np.save(os.path.join(HERE, '%s.%s.npy' % (name, n)), v)


def i64(*v):
    return np.array(v, np.int64)


x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10

# x.view(x.size(0), -1) as PyTorch exports it, plus Size, Range and
# ConstantOfShape over the shape: everything but one reshape folds.
model('fold-chain', 14, [
    helper.make_node('Shape', ['x'], ['s']),
    helper.make_node('Gather', ['s', 'zero'], ['n'], axis=0),
    helper.make_node('Unsqueeze', ['n', 'axes0'], ['n1']),
    helper.make_node('Concat', ['n1', 'minus1'], ['shape'], axis=0),
    helper.make_node('Reshape', ['x', 'shape'], ['y']),
    helper.make_node('Size', ['x'], ['size']),
    helper.make_node('Gather', ['s', 'two'], ['w'], axis=0),
    helper.make_node('Range', ['zero', 'w', 'one'], ['iota']),
    helper.make_node('Slice', ['s', 'one1', 'two1'], ['c1']),
    helper.make_node('ConstantOfShape', ['c1'], ['ones'],
                     value=numpy_helper.from_array(np.array([1], np.float32))),
], x, [('y', x.reshape(2, 12)), ('size', np.array(24, np.int64)),
       ('iota', i64(0, 1, 2, 3)), ('ones', np.ones(3, np.float32))],
    inits=[('zero', np.array(0, np.int64)), ('one', np.array(1, np.int64)),
           ('two', np.array(2, np.int64)), ('axes0', i64(0)), ('minus1', i64(-1)),
           ('one1', i64(1)), ('two1', i64(2))])

# The same at opset 11: Squeeze and Unsqueeze take 'axes' attributes.
model('fold-chain-v11', 11, [
    helper.make_node('Shape', ['x'], ['s']),
    helper.make_node('Slice', ['s', 'st', 'en'], ['last']),
    helper.make_node('Squeeze', ['last'], ['w'], axes=[0]),
    helper.make_node('Unsqueeze', ['w'], ['w1'], axes=[0]),
    helper.make_node('Concat', ['minus1', 'w1'], ['shape'], axis=0),
    helper.make_node('Reshape', ['x', 'shape'], ['y']),
], x, [('y', x.reshape(6, 4))],
    inits=[('st', i64(-1)), ('en', i64(1 << 62)), ('minus1', i64(-1))])

# A weight transposed at export time is a transposed const.
w = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
model('transpose-weight', 13, [
    helper.make_node('Transpose', ['w'], ['wt'], perm=[1, 0]),
    helper.make_node('MatMul', ['x', 'wt'], ['y']),
], x, [('y', x @ w.T)], inits=[('w', w)])

# Attributes before they became inputs.
model('slice-v1', 1, [helper.make_node('Slice', ['x'], ['y'], starts=[1, -3], ends=[1000, -1],
                                       axes=[1, 2])], x, [('y', x[:, 1:, -3:-1])])
model('squeeze-v1', 1, [helper.make_node('Unsqueeze', ['x'], ['u'], axes=[0, 3]),
                        helper.make_node('Squeeze', ['u'], ['y'], axes=[3])],
      x, [('y', x.reshape(1, 2, 3, 4))])
model('split-v2', 2, [helper.make_node('Split', ['x'], ['a', 'b'], axis=2, split=[1, 3])],
      x, [('a', x[:, :, :1]), ('b', x[:, :, 1:])])
model('pad-v2-reflect', 2, [helper.make_node('Pad', ['x'], ['y'], pads=[0, 1, 2, 1, 2, 3],
                                             mode='reflect')],
      x, [('y', np.pad(x, ((0, 1), (1, 2), (2, 3)), mode='reflect'))])
model('pad-v2-edge', 2, [helper.make_node('Pad', ['x'], ['y'], pads=[0, 1, 0, 1, 0, 2],
                                          mode='edge')],
      x, [('y', np.pad(x, ((0, 1), (1, 0), (0, 2)), mode='edge'))])
model('pad-v11-crop', 11, [helper.make_node('Pad', ['x', 'p', 'v'], ['y'])],
      x, [('y', np.pad(x, ((0, 0), (0, 1), (1, 0)), constant_values=2.5)[:, 1:, :-2])],
      inits=[('p', i64(0, -1, 1, 0, 1, -2)), ('v', np.array(2.5, np.float32))])
model('tile-v6', 6, [helper.make_node('Tile', ['x', 'r'], ['y'])],
      x, [('y', np.tile(x, (2, 1, 3)))], inits=[('r', i64(2, 1, 3))])

# Rearrangements: DepthToSpace (CRD) and SpaceToDepth.
xd = np.arange(32, dtype=np.float32).reshape(1, 8, 2, 2)
crd = xd.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 4)
model('depth-to-space-crd', 13, [helper.make_node('DepthToSpace', ['x'], ['y'], blocksize=2,
                                                  mode='CRD')], xd, [('y', crd)])
s2d = xd.reshape(1, 8, 1, 2, 1, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 32, 1, 1)
model('space-to-depth', 13, [helper.make_node('SpaceToDepth', ['x'], ['y'], blocksize=2)],
      xd, [('y', s2d)])

# Trilu of run-time data: a where over a known mask.
model('trilu', 14, [helper.make_node('Trilu', ['x', 'k'], ['y'], upper=0)],
      x, [('y', np.tril(x, -1))], inits=[('k', np.array(-1, np.int64))])

# Errors: random dropout, a reflection wider than its axis.
model('dropout-training', 13, [helper.make_node('Dropout', ['x', 'r', 't'], ['y'])],
      x, [('y', x)], inits=[('r', np.array(0.5, np.float32)), ('t', np.array(True))])
model('pad-reflect-wide', 11, [helper.make_node('Pad', ['x', 'p'], ['y'], mode='reflect')],
      x, [('y', np.pad(x, ((0, 0), (0, 0), (4, 0)), mode='reflect'))],
      inits=[('p', i64(0, 0, 4, 0, 0, 0))])

# Element-indexed ops over known indices: GatherElements becomes a gather of
# the flattened data by a known index map; ScatterND with reduction add
# and a repeated index, a where per write round.
gi = i64(1, 0, 2, 0, 2, 1).reshape(2, 3)[None].repeat(2, 0)     # (2, 2, 3)
model('gather-elements', 13, [helper.make_node('GatherElements', ['x', 'i'], ['y'], axis=1)],
      x, [('y', np.take_along_axis(x[:, :, :3], gi, axis=1))], inits=[('i', gi)])
si = i64(0, 2, 0).reshape(3, 1)
su = np.arange(24, dtype=np.float32).reshape(3, 2, 4) / 2
sy = x.copy()
sy = sy.reshape(2, 3, 4).transpose(1, 0, 2).copy()              # (3, 2, 4)
ref = sy.copy()
for j in range(3):
    ref[si[j, 0]] += su[j]
model('scatternd-add', 16, [helper.make_node('ScatterND', ['x', 'i', 'u'], ['y'], reduction='add')],
      sy, [('y', ref)], inits=[('i', si), ('u', su)])
