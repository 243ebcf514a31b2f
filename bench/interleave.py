#!/usr/bin/python3
"""interleave.py: aicm and PyTorch eager on one model, alternating run by run in one process.

    interleave.py BUILD_DIR DIR NAME [REPS]     (REPS 300; DIR as bench/models.sh's BUILD_DIR/models)

bench/models.py times aicm-run and PyTorch in separate processes, a few
seconds apart.  On this VM a single-threaded run's speed moves in phases
of tens to hundreds of milliseconds that neither side causes (docs/perf.md,
"Session 11: the transformer layer's bimodal runs": the same phases show in
a probe that only runs FMAs and reads a buffer), so two processes can land
in different phases and their medians then differ by more than the code
does.  Here aicm (libaicm through python/aicm, the tile engine, the
pipeline of bench/models.py, one thread) and the model under
torch.inference_mode() (one thread) run one after the other REPS times in
the same process, so each pair shares its phase.  Printed: each side's min
and median, the ratio of the medians, of the mins, and the median of the
REPS per-pair ratios aicm/eager, which the phases move least.  One thread
means one on PyTorch's side too: torch.set_num_threads(1) does not reach
the pool of Debian's libopenblas0-pthread that its matmuls run on, so the
script sets OPENBLAS_NUM_THREADS=1 before numpy or torch loads OpenBLAS
(as bench/torch_env.sh does for bench/models.sh).  Both sides'
outputs are checked against NAME.out.npy first (DESIGN section 7's
measure, within the f32 tolerance 1e-4): a figure from a wrong output is
no figure.  The OpenBLAS rule of DESIGN section 11 is the caller's, as for
bench/models.py (bench/models.sh prints the variable it sets).  A measuring
aid beside `make bench`'s table, not a replacement for it: the issue's
targets are judged there.
"""
import importlib.util
import os
import statistics
import sys
import time

# before OpenBLAS loads (numpy's import loads it): it reads the variable once
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PIPE = "shape-infer,fuse,autotune{target=cpu-tile},lower-tiled"   # bench/models.py's


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write("usage: interleave.py BUILD_DIR DIR NAME [REPS]\n")
        return 2
    build, d, name = argv[1:4]
    reps = int(argv[4]) if len(argv) > 4 else 300
    os.environ.setdefault("AICM_LIB", os.path.join(os.path.abspath(build), "libaicm.so"))
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import aicm
    import torch
    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location(
        "export_models", os.path.join(HERE, "..", "scripts", "export-models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model, x = mod.build(name)
    path = os.path.join(d, name + ".aicm")
    try:
        with open(path) as f:
            text = f.read()
        xin = np.load(os.path.join(d, name + ".in.npy"))
        ref = np.load(os.path.join(d, name + ".out.npy")).astype(np.float64)
    except OSError as e:
        sys.stderr.write("interleave.py: cannot read '%s': %s (expected tests/models.sh's "
                         "export first)\n" % (e.filename, e.strerror))
        return 2
    # name= is the file the consts' file= paths are relative to
    run = aicm.compile(text, passes=PIPE, threads=1, name=path)
    with torch.inference_mode():
        outs = {"aicm": np.asarray(run(xin), dtype=np.float64),
                "eager": model(x).numpy().astype(np.float64)}
        for side, y in outs.items():
            err = np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1.0)
            if err > 1e-4:
                sys.stderr.write("interleave.py: %s's output differs from '%s.out.npy' by %.3g "
                                 "(expected at most 1e-4)\n" % (side, name, err))
                return 1
        for _ in range(5):
            run(xin)
            model(x)
        ta, te = [], []
        for _ in range(reps):
            t = time.perf_counter()
            run(xin)
            ta.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            model(x)
            te.append((time.perf_counter() - t) * 1e3)
    ma, me = statistics.median(ta), statistics.median(te)
    pair = statistics.median(a / e for a, e in zip(ta, te))
    print("%s, %d pairs, 1 thread: aicm min %.3f ms, median %.3f ms; eager min %.3f ms, "
          "median %.3f ms" % (name, reps, min(ta), ma, min(te), me))
    print("  aicm/eager: medians %.3f, mins %.3f, median of the per-pair ratios %.3f" % (
        ma / me, min(ta) / min(te), pair))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
