#!/usr/bin/python3
"""export-models.py: the real PyTorch models of issue 17, as ONNX files with their inputs and outputs.

    /usr/bin/python3 scripts/export-models.py OUTDIR [NAME...]     (NAME: mlp transformer cnn resnet18;
                                                                    default all)
    /usr/bin/python3 scripts/export-models.py --ops OUTDIR [NAME...]   also print each model's op-type
                                                                    histogram (python3-onnx)

For each model it writes OUTDIR/NAME.onnx (torch.onnx.export, opset 14,
do_constant_folding=True, graph input 'x', output 'y'), NAME.in.npy (the
input, f32, from a fixed seed) and NAME.out.npy (torch's own eager output on
it under torch.inference_mode(), the reference aicm-run is compared with).
Weights are PyTorch's random initialisation after torch.manual_seed, so
nothing is downloaded and the files are the same on every run; each model is
seeded on its own, so exporting one alone gives the same file as exporting
all.  Models are in eval mode (dropout off, batchnorm on its running
statistics).  DESIGN section 16: the export runs with gradients enabled,
because TransformerEncoderLayer's fast path (taken under no_grad or
inference mode) is one fused native op that torch.onnx cannot export; the
reference output is computed under inference_mode all the same, that is by
the fast path, which is what a user of the layer gets.

The op types each model exports to (opset 14, torch 1.13, from --ops):
  mlp          Gemm 2, Relu 1
  transformer  Constant 17, Add 10, Transpose 6, MatMul 5, Mul 5, Reshape 5,
               Div 4, ReduceMean 4, Identity 3, Slice 3, Pow 2, Sqrt 2, Sub 2,
               Gather 1, Gemm 1, Relu 1, Shape 1, Softmax 1: the attention
               and both LayerNorms decomposed by the exporter; the q/k/v split
               of the packed in-projection is Shape-Gather-Div-Mul-Slice, a
               static shape computation for the importer to fold; Identity
               aliases initializers that the exporter deduplicated
  cnn          Conv 2, MaxPool 2, Relu 2, Flatten 1, Gemm 1 (the batchnorms
               are folded into the convs by constant folding in eval mode)
  resnet18     Conv 20, Relu 17, Identity 16, Add 8, Flatten 1, Gemm 1,
               GlobalAveragePool 1, MaxPool 1 (batchnorms folded, as in cnn)
"""
import collections
import os
import sys

# tests/models.sh compares NAME.out.npy with testdata/models byte for byte,
# and torch's float results depend on the kernels it dispatches to: OpenBLAS
# picks one per CPU (its Prescott, Haswell and SkylakeX/Cooperlake kernels
# give different last bits: the files exported on an Intel Xeon, where
# OpenBLAS falls back to Prescott, were 1-2 ulp off on an AMD Zen 5, where it
# picks Cooperlake), and ATen its vector width.  So the export, run as a
# script, names both before torch loads them, whatever the environment says:
# OpenBLAS's generic Prescott kernel (SSE2, the same on every x86-64) and
# ATen's AVX2 kernels, by running itself again with them set.  The reference
# is then the same file on every machine.  bench/models.py, bench/blocks.py
# and bench/interleave.py import this file as a module into the processes
# they time: there it changes nothing, so torch runs on its own kernels.
PINNED = {"OPENBLAS_CORETYPE": "Prescott", "ATEN_CPU_CAPABILITY": "avx2"}
if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in PINNED.items()):
    os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **PINNED})

import numpy as np  # noqa: E402  (after the environment above)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

OPSET = 14
SEED = 17                                # issue 17


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(64, 128)
        self.l2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class Cnn(nn.Module):
    """conv-batchnorm-relu-maxpool twice, then flatten and linear: 3x32x32 -> 10."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.b2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.b1(self.c1(x))), 2)
        x = nn.functional.max_pool2d(torch.relu(self.b2(self.c2(x))), 2)
        return self.fc(torch.flatten(x, 1))


def randomize_bn(model):
    """Give every batchnorm non-trivial running statistics and affine terms,
    so that the exported graph (or the folded conv) really carries them:
    PyTorch's initial ones (mean 0, var 1, weight 1, bias 0) are an identity."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.rand(n) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(n) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(n) * 0.2 - 0.1)


def build(name):
    """The model NAME in eval mode and its input, both from SEED."""
    torch.manual_seed(SEED)
    if name == "mlp":
        model, shape = Mlp(), (4, 64)
    elif name == "transformer":
        model = nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True)
        shape = (1, 128, 256)
    elif name == "cnn":
        model, shape = Cnn(), (1, 3, 32, 32)
        with torch.no_grad():
            randomize_bn(model)
    elif name == "resnet18":
        import torchvision
        model, shape = torchvision.models.resnet18(weights=None), (1, 3, 224, 224)
    else:
        raise SystemExit("export-models: unknown model '%s' (expected mlp, transformer, cnn "
                         "or resnet18)" % name)
    model.eval()
    gen = torch.Generator().manual_seed(SEED)
    x = torch.randn(shape, generator=gen, dtype=torch.float32)
    return model, x


def histogram(path):
    import onnx
    ops = collections.Counter(n.op_type for n in onnx.load(path).graph.node)
    return ", ".join("%s %d" % (k, v) for k, v in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])))


def export(name, outdir, show_ops):
    model, x = build(name)
    path = os.path.join(outdir, name + ".onnx")
    # Gradients enabled (DESIGN section 16): the parameters require grad, so
    # TransformerEncoderLayer takes its decomposed path, which exports.
    with torch.enable_grad():
        torch.onnx.export(model, (x,), path, opset_version=OPSET, do_constant_folding=True,
                          input_names=["x"], output_names=["y"])
    with torch.inference_mode():
        y = model(x)
    np.save(os.path.join(outdir, name + ".in.npy"), x.numpy())
    np.save(os.path.join(outdir, name + ".out.npy"), y.numpy())
    line = "export-models: %s: %s, input %s, output %s" % (name, path, tuple(x.shape),
                                                          tuple(y.shape))
    print(line + (" ops: " + histogram(path) if show_ops else ""))


def main(argv):
    show_ops = False
    if argv and argv[0] == "--ops":
        show_ops = True
        argv = argv[1:]
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    outdir, names = argv[0], argv[1:] or ["mlp", "transformer", "cnn", "resnet18"]
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(1)
    for n in names:
        export(n, outdir, show_ops)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
