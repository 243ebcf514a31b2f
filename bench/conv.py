#!/usr/bin/python3
"""conv.py: the PyTorch side of `make bench`'s conv2d and max_pool2d (bench/conv.sh).

    conv.py gen DIR               x.npy (8, 64, 56, 56) and w.npy (64, 64, 3, 3), f32, seeded
    conv.py torch DIR REPS        PyTorch's best time of REPS runs after a warm-up, one thread,
                                  under inference mode: conv2d(x, w, padding=1), then
                                  max_pool2d(y, 3, 2) on its result; writes y_torch.npy, p_torch.npy
    conv.py err DIR OUT           DESIGN section 7's error of aicm's y.npy and p.npy in OUT
                                  against PyTorch's

PyTorch is Debian's python3-torch, run as DESIGN section 16 says: one thread
(torch.set_num_threads(1)), torch.inference_mode(), timed after a warm-up.
Its conv2d on the CPU is mkldnn's (oneDNN), not a BLAS call.
"""
import sys
import time

import numpy as np


def gen(d):
    rng = np.random.default_rng(16)
    np.save(d + "/x.npy", rng.uniform(-1, 1, (8, 64, 56, 56)).astype(np.float32))
    np.save(d + "/w.npy", rng.uniform(-1, 1, (64, 64, 3, 3)).astype(np.float32) / 24)


def best(f, reps):
    f()                                  # warm-up
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    return min(ts) * 1e3, r


def run_torch(d, reps):
    import torch
    torch.set_num_threads(1)
    x = torch.from_numpy(np.load(d + "/x.npy"))
    w = torch.from_numpy(np.load(d + "/w.npy"))
    with torch.inference_mode():
        cm, y = best(lambda: torch.nn.functional.conv2d(x, w, padding=1), reps)
        pm, p = best(lambda: torch.nn.functional.max_pool2d(y, 3, 2), reps)
    np.save(d + "/y_torch.npy", y.numpy())
    np.save(d + "/p_torch.npy", p.numpy())
    print("torch %s, %d thread(s): conv %.3f ms, pool %.3f ms" % (torch.__version__,
                                                                   torch.get_num_threads(), cm, pm))


def err(d, out):
    for n in ("y", "p"):
        a = np.load(out + "/" + n + ".npy").astype(np.float64)
        b = np.load(d + "/" + n + "_torch.npy").astype(np.float64)
        print("err %s: %.3g" % (n, np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1.0)))


def main(argv):
    if len(argv) >= 2 and argv[0] == "gen":
        gen(argv[1])
    elif len(argv) >= 3 and argv[0] == "torch":
        run_torch(argv[1], int(argv[2]))
    elif len(argv) >= 3 and argv[0] == "err":
        err(argv[1], argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
