#!/usr/bin/python3
"""models.py: `make bench`'s real models, aicm against PyTorch's own CPU execution (issue 17 item 4).

    models.py measure BUILD_DIR DIR REPS ROUNDS NAME...
        per model (DIR/NAME.onnx, NAME.in.npy, NAME.out.npy from scripts/export-models.py):
        aicm-import's time, aicm-opt's whole pipeline's time, aicm-run's execution time
        (--threads=1 --bench=REPS, its median) and the peak RSS of each process, against
        PyTorch eager and TorchScript (trace + freeze) in their own processes; ROUNDS
        rounds alternate the three runs; a table and the ratios aicm/eager, then the
        issue's targets judged on this run
    models.py torch DIR NAME MODE REPS
        (a child of measure) PyTorch's median time of REPS runs of NAME after a
        warm-up, MODE eager or jit, one thread: prints "torch MODE: median X ms, min
        Y ms, max err E" (E: against NAME.out.npy, DESIGN section 7's measure)

PyTorch runs as DESIGN section 16 says: Debian's python3-torch 1.13 on the CPU,
torch.set_num_threads(1), under torch.inference_mode(), timed after warm-up.
The model is the one scripts/export-models.py exports (same code, same seed,
so the same weights): eager is model(x); jit is torch.jit.trace(model, x) then
torch.jit.freeze, traced under no_grad (inference tensors cannot be traced)
and run under inference_mode.  The OpenBLAS kernel rule of DESIGN section 11
is the caller's (bench/models.sh): the variables it names in
MODELS_TORCH_ENV ("OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1") are
set for PyTorch's processes alone (the thread count because
torch.set_num_threads(1) does not reach OpenBLAS's own pool: bench/torch_env.sh).  aicm's side: aicm-import and aicm-opt are timed as whole
processes (the best of ROUNDS runs, wall clock), since that is what a user
waits for; aicm-run's time is its own --bench median of execution alone
(loading the weights and compiling excluded, as PyTorch's model is built
before its timer starts).  Peak RSS is each process's, by /usr/bin/time,
the largest of the rounds; PyTorch's includes the torch library itself (a
bare `import torch` is measured and printed for scale).  Each side's time is
the best of the ROUNDS rounds' medians: the machine is shared, and the
least disturbed round is the closest to the code's own speed.
"""
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# the tile engine's tiles by autotune's model of it (issue 18 item 6), not
# the default h100 model's
PIPE = "shape-infer,fuse,autotune{target=cpu-tile},lower-tiled"
RSS_DIR = "."                            # measure() points it at its data folder


def spawn(argv, keep=True, env=None):
    """Run argv to completion; return (wall seconds, peak RSS in MB, its output
    text, or "" when not keep: stdout then goes to /dev/null, stderr still kept).
    The RSS is /usr/bin/time's %M: a child forked from this Python process and
    measured with wait4 would carry Python's own high-water mark across its
    exec.  A failure raises with the command's last lines of output."""
    rssf = os.path.join(RSS_DIR, "rss")
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rssf] + argv,
                       stdout=subprocess.PIPE if keep else subprocess.DEVNULL,
                       stderr=subprocess.STDOUT if keep else subprocess.PIPE, env=env, text=True)
    wall = time.perf_counter() - t
    out = p.stdout if keep else p.stderr
    if p.returncode != 0:
        tail = "\n".join(out.splitlines()[-6:])
        raise RuntimeError("%s exited %d:\n%s" % (" ".join(argv), p.returncode, tail))
    with open(rssf) as f:
        return wall, int(f.read().split()[-1]) / 1024.0, out


def export_module():
    spec = importlib.util.spec_from_file_location(
        "export_models", os.path.join(HERE, "..", "scripts", "export-models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_torch(d, name, mode, reps):
    import torch
    torch.set_num_threads(1)
    model, x = export_module().build(name)
    ref = np.load(os.path.join(d, name + ".out.npy")).astype(np.float64)
    if mode == "jit":
        with torch.no_grad():
            model = torch.jit.freeze(torch.jit.trace(model, (x,)))
    elif mode != "eager":
        raise SystemExit("models.py: unknown mode '%s' (expected eager or jit)" % mode)
    ts = []
    with torch.inference_mode():
        for _ in range(5):              # warm-up; the profiling executor specialises on run 2
            y = model(x)
        for _ in range(reps):
            t = time.perf_counter()
            y = model(x)
            ts.append(time.perf_counter() - t)
    err = np.max(np.abs(y.numpy() - ref)) / max(np.max(np.abs(ref)), 1.0)
    print("torch %s: median %.3f ms, min %.3f ms, max err %.3g" % (
        mode, statistics.median(ts) * 1e3, min(ts) * 1e3, err))


def measure(build, d, reps, rounds, names):
    global RSS_DIR
    RSS_DIR = d
    imp, opt, run = (os.path.join(build, t) for t in ("aicm-import", "aicm-opt", "aicm-run"))
    torch_cmd = [sys.executable, os.path.abspath(__file__), "torch", d]
    # OPENBLAS_CORETYPE and the like for PyTorch's processes alone
    # (bench/models.sh decides them by DESIGN section 11's rule)
    tenv = dict(os.environ)
    tenv.update(kv.split("=", 1) for kv in os.environ.get("MODELS_TORCH_ENV", "").split() if "=" in kv)
    outd = os.path.join(d, "bench-out")
    os.makedirs(outd, exist_ok=True)
    _, base_rss, _ = spawn([sys.executable, "-c", "import torch; torch.ones(1)"])
    rows = {}
    for n in names:
        onnx, aicm = os.path.join(d, n + ".onnx"), os.path.join(d, "bench-" + n + ".aicm")
        r = {k: [] for k in ("imp", "opt", "run", "eager", "jit")}
        rss = {k: 0.0 for k in r}
        errs = {}
        for _ in range(rounds):
            w, m, _ = spawn([imp, onnx, "-o", aicm])
            r["imp"].append(w); rss["imp"] = max(rss["imp"], m)
            w, m, _ = spawn([opt, "--pass=" + PIPE, aicm], keep=False)
            r["opt"].append(w); rss["opt"] = max(rss["opt"], m)
            _, m, out = spawn([run, "--threads=1", "--bench=%d" % reps, "--pass=" + PIPE,
                               "--input", "x=" + os.path.join(d, n + ".in.npy"),
                               "--output-dir", outd, aicm])
            r["run"].append(float(re.search(r"^bench:.*median ([0-9.]+) ms", out, re.M).group(1)))
            rss["run"] = max(rss["run"], m)
            for mode in ("eager", "jit"):
                _, m, out = spawn(torch_cmd + [n, mode, str(reps)], env=tenv)
                mm = re.search(r"median ([0-9.]+) ms.*max err (\S+)", out)
                r[mode].append(float(mm.group(1)))
                errs[mode] = mm.group(2)
                rss[mode] = max(rss[mode], m)
        y = np.load(os.path.join(outd, "y.npy")).astype(np.float64)
        ref = np.load(os.path.join(d, n + ".out.npy")).astype(np.float64)
        errs["aicm"] = "%.3g" % (np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1.0))
        best = {k: min(v) for k, v in r.items()}
        rows[n] = (best, rss, errs)
        print_row(n, best, rss, errs, header=len(rows) == 1)
    print("  (times: best of %d rounds; aicm-run and torch: the median of %d runs after "
          "warm-up; RSS: the largest; a bare 'import torch' peaks at %.0f MB)" % (rounds, reps, base_rss))
    print("  errors against torch eager's exported output (DESIGN section 7's measure): " +
          "; ".join("%s aicm %s, eager %s, jit %s" % (n, e["aicm"], e["eager"], e["jit"])
                    for n, (_, _, e) in rows.items()))
    print("  peak RSS of aicm-import and aicm-opt: " + "; ".join(
        "%s %.1f MB and %.1f MB" % (n, rss["imp"], rss["opt"]) for n, (_, rss, _) in rows.items()))
    targets(rows)


def print_row(n, b, rss, errs, header):
    if header:
        print("%-12s %8s %8s %8s %9s %8s %9s %8s %9s %8s %7s %7s" % (
            "model", "import-s", "opt-s", "imp+opt", "aicm-ms", "aicm-MB", "eager-ms",
            "eager-MB", "jit-ms", "jit-MB", "a/eager", "a/jit"))
    print("%-12s %8.3f %8.3f %8.3f %9.3f %8.1f %9.3f %8.1f %9.3f %8.1f %7.3f %7.3f" % (
        n, b["imp"], b["opt"], b["imp"] + b["opt"], b["run"], rss["run"], b["eager"],
        rss["eager"], b["jit"], rss["jit"], b["run"] / b["eager"], b["run"] / b["jit"]))
    sys.stdout.flush()


def targets(rows):
    print("targets (issue 17), from this run:")
    if "resnet18" in rows:
        b = rows["resnet18"][0]
        t = b["imp"] + b["opt"]
        print("  resnet18 import + compile: %.3f s (%.3f + %.3f), target < 2 s: %s" % (
            t, b["imp"], b["opt"], "met" if t < 2 else "NOT met"))
        q = b["run"] / b["eager"]
        print("  resnet18 run, 1 thread: aicm/eager %.3f, target <= 1.5: %s" % (
            q, "met" if q <= 1.5 else "NOT met"))
    if "transformer" in rows:
        b = rows["transformer"][0]
        q = b["run"] / b["eager"]
        print("  transformer layer run, 1 thread: aicm/eager %.3f, target <= 1.2: %s" % (
            q, "met" if q <= 1.2 else "NOT met"))


def main(argv):
    if len(argv) >= 6 and argv[0] == "measure":
        measure(argv[1], argv[2], int(argv[3]), int(argv[4]), argv[5:])
    elif len(argv) == 5 and argv[0] == "torch":
        run_torch(argv[1], argv[2], argv[3], int(argv[4]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except RuntimeError as e:
        print("models.py: %s" % e, file=sys.stderr)
        sys.exit(1)
