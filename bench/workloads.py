"""workloads.py: the numpy side of `make bench` (bench/run.sh).

    python3 workloads.py gen  W DT DIR         write W's inputs as DIR/NAME.npy
    python3 workloads.py run  W DT DIR REPS [AICM_OUT]
                                               time numpy on them; compare aicm's output
    python3 workloads.py blas                  which BLAS numpy loaded
    python3 workloads.py ideal W DT            W's ideal flops and bytes (each
                                               input read once, the output
                                               written once), "FLOPS BYTES"

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
    # the small suite (bench/native.sh): held in cache, where the cost of
    # interpreting tile programs shows
    "w1s": {"x": (128, 128), "w": (128, 128), "b": (128,)},
    "w2s": {"x": (256, 256)},
    "w3s": {"x": (256, 256)},
    "w5s": {"x": (256, 256), "y": (256, 256), "z": (256, 256)},
}
OUTPUT = {"w1": "y", "w2": "y", "w3": "y", "w4": "y", "w5": "o"}


def ideal(w):
    """The flops (an FMA counts 2) and the elements moved of workload w."""
    shapes = INPUTS[w]
    size = {n: int(np.prod(s)) for n, s in shapes.items()}
    base = w.rstrip("s")
    if base == "w1":
        (m, k), n = shapes["x"], shapes["w"][1]
        return 2 * m * n * k + 3 * m * n, size["x"] + size["w"] + size["b"] + m  # add, relu, sum
    if base == "w2":
        m, n = shapes["x"]
        return 2 * m * n, m * n + m                                   # relu + sum
    if base == "w3":
        m, n = shapes["x"]
        return 5 * m * n, 2 * m * n                                   # max, sub, exp, sum, div
    if base == "w4":
        (m, d), n = shapes["q"], shapes["k"][0]
        return 2 * 2 * m * n * d + 6 * m * n, size["q"] + size["k"] + size["v"] + m * d
    if base == "w5":
        m, n = shapes["x"]
        return 3 * m * n, 4 * m * n                                   # mul, add, maximum
    raise SystemExit("unknown workload " + w)


def softmax(s):
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return e / e.sum(axis=-1, keepdims=True)


def compute(w, a, dt):
    w = w.rstrip("s")
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
    w, dts = rest[0], rest[1]
    dt = np.float64 if dts == "f64" else np.float32
    if cmd == "ideal":
        fl, el = ideal(w)
        print(fl, el * np.dtype(dt).itemsize)
        return
    d = rest[2]
    if cmd == "gen":
        rng = np.random.default_rng(int(w[1]))
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
