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
no figure.  The OpenBLAS kernel (DESIGN sections 11 and 16) is chosen here,
by bench/blas_env.sh's rule, not inherited: an OPENBLAS_CORETYPE or
OPENBLAS_L2_SIZE of the caller's environment is dropped (this machine's
names Haswell on an AVX-512 CPU where OpenBLAS picks Cooperlake), the core
OpenBLAS loads is read off OPENBLAS_VERBOSE=2 in a probe process, a
generic one is replaced by the kernel for this CPU, and the script runs
itself again under that environment before numpy or torch is loaded (the
library reads the variables once, when it loads); the kernel it runs on
is printed first.  A measuring aid beside `make bench`'s table, not a
replacement for it: the issue's targets are judged there.
"""
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PIPE = "shape-infer,fuse,autotune{target=cpu-tile},lower-tiled"   # bench/models.py's
BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
GENERIC = ("Prescott", "Core2", "Nehalem", "")
# the probe loads the libraries as the run does and does one BLAS matmul
PROBE = "import numpy, torch; torch.ones(64, 64) @ torch.ones(64, 64)"


def blas_core(env):
    """The core OpenBLAS loads in a process of env ("" when it says none)."""
    r = subprocess.run([sys.executable, "-c", PROBE], env=dict(env, OPENBLAS_VERBOSE="2"),
                       capture_output=True, text=True)
    m = re.search(r"^Core: *([A-Za-z0-9]+)", r.stdout + r.stderr, re.M)
    return m.group(1) if m else ""


def blas_env():
    """bench/blas_env.sh's rule: the environment without the inherited
    variables, OPENBLAS_CORETYPE added when OpenBLAS would load a generic
    core; and the line that says which core runs."""
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
    core = blas_core(env)
    if core not in GENERIC:
        return env, "OpenBLAS core: %s (its own pick for this CPU)" % core
    with open("/proc/cpuinfo") as f:
        flags = set(" ".join(line for line in f if line.startswith("flags")).split())
    named = ("Cooperlake" if "avx512_bf16" in flags else "SkylakeX" if "avx512f" in flags
             else "Haswell" if "avx2" in flags else "")
    if not named:
        return env, "OpenBLAS core: %s (generic; no better kernel for this CPU)" % (
            core or "none loaded")
    got = blas_core(dict(env, OPENBLAS_CORETYPE=named))
    if named == "Cooperlake" and got != "Cooperlake":    # an OpenBLAS without it
        named = "SkylakeX"
        got = blas_core(dict(env, OPENBLAS_CORETYPE=named))
    env["OPENBLAS_CORETYPE"] = named
    return env, "OpenBLAS core: %s (generic %s on this CPU, so OPENBLAS_CORETYPE=%s)" % (
        got or "none loaded", core or "none loaded", named)


# Before numpy and torch load OpenBLAS: choose its kernel, and run again
# under it (AICM_INTERLEAVE_BLAS carries the line to print and marks the
# second run).
if "AICM_INTERLEAVE_BLAS" not in os.environ:
    _env, _line = blas_env()
    _env["AICM_INTERLEAVE_BLAS"] = _line
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:], _env)

# before OpenBLAS loads (numpy's import loads it): it reads the variable once
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np   # noqa: E402 (after the kernel is chosen)


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write("usage: interleave.py BUILD_DIR DIR NAME [REPS]\n")
        return 2
    build, d, name = argv[1:4]
    reps = int(argv[4]) if len(argv) > 4 else 300
    print(os.environ["AICM_INTERLEAVE_BLAS"])
    os.environ.setdefault("AICM_LIB", os.path.join(os.path.abspath(build), "libaicm.so"))
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import aicm
    import torch
    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location(
        "export_models", os.path.join(HERE, "..", "scripts", "export-models.py"))
    mod = importlib.util.module_from_spec(spec)
    # imported as a module, the export pins no kernels (it runs itself
    # again with them only as __main__): torch keeps the timed run's
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
