"""workloads.py: the numpy side of `make bench` (bench/run.sh).

    python3 workloads.py gen  W DT DIR         write W's inputs as DIR/NAME.npy
    python3 workloads.py run  W DT DIR REPS [AICM_OUT]
                                               time numpy on them; compare aicm's output
    python3 workloads.py blas                  which BLAS numpy loaded

The same inputs go to aicm-run (--input NAME=DIR/NAME.npy), so that both
sides compute the same thing; `run` prints numpy's min and median over
REPS timed runs after one warm-up, and, given aicm's --output-dir, the
error of aicm's result against numpy's by DESIGN §7's measure.  numpy
runs eagerly, one op at a time, as a user would write it.
"""
import os
import sys
import time

import numpy as np

# The graph input names match bench/w/W-DT.aicm.
INPUTS = {
    "w1": {"x": (1024, 1024), "w": (1024, 1024), "b": (1024,)},
    "w2": {"x": (4096, 4096)},
    "w3": {"x": (4096, 1024)},
    "w4": {"q": (512, 64), "k": (2048, 64), "v": (2048, 64)},
    "w5": {"x": (4096, 4096), "y": (4096, 4096), "z": (4096, 4096)},
}
OUTPUT = {"w1": "y", "w2": "y", "w3": "y", "w4": "y", "w5": "o"}


def softmax(s):
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return e / e.sum(axis=-1, keepdims=True)


def compute(w, a, dt):
    if w == "w1":
        return np.maximum(a["x"] @ a["w"] + a["b"], 0).sum(axis=1)
    if w == "w2":
        return np.maximum(a["x"], 0).sum(axis=1)
    if w == "w3":
        return softmax(a["x"])
    if w == "w4":
        return softmax((a["q"] @ a["k"].T) * dt(0.125)) @ a["v"]
    if w == "w5":
        return np.maximum(a["x"] * a["y"] + a["z"], 0)
    raise SystemExit("unknown workload " + w)


def blas():
    a = np.ones((64, 64))
    a @ a
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "blas" in p or "lapack" in p:
                libs.add(os.path.realpath(p))
    print("numpy %s, BLAS loaded: %s" % (np.__version__, ", ".join(sorted(libs)) or "none"))


def main():
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "blas":
        return blas()
    w, dts, d = rest[0], rest[1], rest[2]
    dt = np.float64 if dts == "f64" else np.float32
    if cmd == "gen":
        rng = np.random.default_rng(int(w[1:]))
        for name, shape in INPUTS[w].items():
            np.save(os.path.join(d, name + ".npy"), rng.uniform(-1, 1, shape).astype(dt))
        return
    reps = int(rest[3])
    a = {n: np.load(os.path.join(d, n + ".npy")) for n in INPUTS[w]}
    r = compute(w, a, dt)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        r = compute(w, a, dt)
        ts.append(time.perf_counter() - t)
    ts.sort()
    print("numpy: min %.3f ms, median %.3f ms" % (ts[0] * 1e3, ts[len(ts) // 2] * 1e3))
    if len(rest) > 4:
        got = np.load(os.path.join(rest[4], OUTPUT[w] + ".npy"))
        if got.shape != r.shape or got.dtype != r.dtype:
            print("err: shape/type %s %s vs numpy %s %s" % (got.shape, got.dtype, r.shape, r.dtype))
        else:
            err = np.max(np.abs(got.astype(np.float64) - r)) / max(np.max(np.abs(r)), 1.0)
            print("err: %.3g" % err)


main()
