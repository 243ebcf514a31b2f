"""calibrate.py: fit a cpu target of autotune's cost model to its engine, and
check the model's picks against a timed sweep (issue 18 item 6).

    python3 calibrate.py fit   [--target=cpu-tile|cpu] [--engine=tile|native] [--build=build]
                               [--dtypes=f64,f32] [--times=LOG[,LOG..]] [--graphs=all|workloads|NAME,..]
                               [--write=passes/cost.c]
    python3 calibrate.py sweep [--target=cpu-tile|cpu] [--engine=tile|native] [--build=build]
                               [--workloads=w1,w2,w3,w4,w5] [--dtypes=f64,f32]

The engine defaults to the one the target models: cpu-tile the tile engine,
cpu the native engine (aicm-run --engine=native).  `make calibrate` is the
whole refit: both targets fitted on their engines, their rows written into
passes/cost.c (--write), the timings kept in bench/cal/ and the fits' reports
in build/cal/.

Both time configurations the same way: aicm-run --threads=1 --bench=REPS
(env REPS, default 5) on `shape-infer,fuse{row-fusion=true},lower-tiled{..}`,
and take the median of the per-run process CPU time that --bench prints
("bench cpu:"): on a machine shared with other work, CPU time is what the
load inflates least, and a median of several runs drops the outliers.
Candidates that differ only in warps or stages lower to one tile program and
are timed once.

fit: for each calibration graph (the bench's W1..W5 and a few other shapes of
each kind, so that no constant rests on one workload: a tiny add for the
per-kernel intercept, a small elementwise
add for the per-program overhead, a transposed view and a column sum for the
contiguity term, a smaller matmul) it asks autotune{target=T} --report=json
for the model's features of every candidate (bytes, matmul and other flops
with their padding, programs, loop steps, accumulator bytes, contiguous runs
and cache-line waste), times every distinct tiling (EVERY=N keeps one in N of
the larger spaces), and solves for the target's constants by non-negative
least squares on relative error (each row divided by its measured time, so a
1 ms kernel counts as much as a 100 ms one): the time is

  launch + bytes/bw + mm_flops/tc + vec_flops/vec + programs*prog
         + steps*step + acc_bytes/acc + segs*seg + attn_steps*attn_step
         + fly_bytes*|log2(fly_rows/streams)|/rows + a_reread/reread     (ms)

(acc_bytes counted only when a dot's accumulator tile outgrows l1-kb;
steps are the matmuls' K blocks and the reductions' blocks, attn_steps an
attention kernel's K/V blocks, whose cost -- two dot calls and the online
softmax's row updates -- is of its own and would otherwise be fitted to the
other kinds' steps; the last two terms the native engine's alone: a
reduction's program that reads fly_rows rows side by side, where the core
reads fastest with `streams` (fitted among 2, 4, 8, 16 or none), pays per
halving or doubling; the native dot reads a's [BM, BK] block again for each
further 256-byte strip of b, charged once the block outgrows the L1)

where bytes also counts the cache lines that runs shorter than a line waste
and, when a program's tiles outgrow l2-kb, the bytes its elementwise ops
read and write through them.  The two thresholds are this CPU's cache sizes
(sysfs; the timings' log records them, and a log fitted again with --times
brings its own), and which cache each engine's tiles must fit is fitted too: every
pair of (l2-kb: the L1, the L2 or 1/2, 1/4, 1/8 of it, or none; l1-kb: the
L1, the L2 or always) is solved and the one whose model picks best among
the timed configs kept (the mean log of pick / fastest over the graphs;
then the least error): the tile engine materialises every op's tile, which
must share the L2 with the streams, the native engine's local-array tiles
may want the L1.

with sms=1 (the target models one core: make bench's 1-thread columns).
Non-negativity is by elimination: solve, fix the most negative coefficient
at 0, solve again.  It prints the fitted constants as the row of
passes/cost.c's cost_targets table (with the date and the CPU), the fit's
error per kind, and how much each term contributed.  With --write=FILE it
also puts the row into FILE's cost_targets table in place of the target's
row (and of the comment line above it that an earlier --write wrote).
--times fits the timings of earlier runs (their logs, bench/cal/*.times.log)
instead of timing anew; given several logs, each config counts at its least
time among them: on a shared machine the other work only ever adds time, so
the least of two runs taken hours apart is the nearer to the config's own
(docs/perf.md, session 16: W2's picks, off in either run alone).  The row's
comment then names the logs, and tests/calibrate.sh checks that fitting them
again gives the row in passes/cost.c.  `make calibrate` keeps each run's log
in bench/cal/ and writes the row from it.

sweep: per workload and dtype, the model's pick (autotune{target=T}, the
report's chosen tiling) and its time, the best config of the sweep and its
time, and their ratio; the issue's target is a pick within 10% of the best.
COARSE=P (a percentage; default: off) sweeps coarse then fine, for a quicker
run: every config first with one timed run, then the pick and every config
within P% of the coarse best again with REPS runs, and only those fine
times compared.  No config is left out: a config the coarse pass puts more
than P% behind is not the best unless one run of it was off by that much.
Then the pick and the sweep's three fastest are timed again, alternating,
CONFIRM rounds (default 3), each keeping the least of its medians in these
rounds, and only these times are compared: on a shared machine a burst of
other work during one config's runs would otherwise decide a verdict alone,
and the sweep's own times of its three fastest are biased low (they were
chosen for being fastest in one noisy round), which on a flat space alone
puts the pick behind.
"""
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FUSE = "shape-infer,fuse{row-fusion=true}"

# Extra calibration graphs (name -> text); DT is replaced by the dtype.
EXTRA = {
    # a kernel whose run is mostly its launch: what keeps the fitted
    # per-kernel intercept (launch-us) an overhead and not the fit's error
    # (without it the tile engine's came out at 769 us, where a 16x64 add
    # runs in 2 us, and every "estimated ms" carried it)
    "ew-tiny": """graph @ew_tiny {
  %x = input() : (256, 256) DT
  %y = input() : (256, 256) DT
  %o = add(%x, %y)
}""",
    "ew-small": """graph @ew_small {
  %x = input() : (1024, 1024) DT
  %y = input() : (1024, 1024) DT
  %o = add(%x, %y)
}""",
    "ew-narrow": """graph @ew_narrow {
  %x = input() : (16384, 96) DT
  %y = input() : (16384, 96) DT
  %a = mul(%x, %y)
  %o = relu(%a)
}""",
    "ew-transposed": """graph @ew_transposed {
  %x = input() : (2048, 2048) DT
  %y = input() : (2048, 2048) DT
  %t = transpose(%x)
  %o = add(%t, %y)
}""",
    "red-cols": """graph @red_cols {
  %x = input() : (2048, 2048) DT
  %e = exp(%x)
  %y = sum(%e) axis=0
}""",
    "red-short": """graph @red_short {
  %x = input() : (32768, 256) DT
  %y = sum(%x) axis=1
}""",
    "row-norm": """graph @row_norm {
  %x = input() : (2048, 2048) DT
  %m = max(%x) axis=-1 keepdims=True
  %s = sub(%x, %m)
  %e = exp(%s)
  %d = sum(%e) axis=-1 keepdims=True
  %y = div(%e, %d)
}""",
    "mm-512": """graph @mm512 {
  %x = input() : (512, 512) DT
  %w = input() : (512, 512) DT
  %y = matmul(%x, %w)
}""",
}

FEATURES = ["launch", "bytes", "mm_flops_f64", "mm_flops_f32", "vec_flops_f64", "vec_flops_f32",
            "programs", "steps", "acc_bytes", "segs", "attn_steps", "rows", "reread"]

# The L1 a dot's block of a must fit not to be read again from the L2 for
# each further strip of b (passes/cost.h's COST_L1)
COST_L1 = 32768


def opt(args, name, default):
    for a in args:
        if a.startswith("--" + name + "="):
            return a.split("=", 1)[1]
    return default


def report(build, path, target):
    """autotune's JSON record of the graph's one kernel (the largest if several)."""
    r = subprocess.run([os.path.join(build, "aicm-opt"), "--pass=%s,autotune{target=%s}" % (FUSE, target),
                        "--report=json", path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("calibrate: aicm-opt failed on '%s': %s" % (path, r.stderr.strip()[-400:]))
    recs = [json.loads(l) for l in r.stderr.splitlines() if l.startswith('{"pass":"autotune"')]
    if not recs:
        sys.exit("calibrate: no autotune record for '%s'" % path)
    return max(recs, key=lambda k: k["problem"]["m"] * k["problem"]["n"] * max(k["problem"]["k"], 1))


def time_config(build, engine, path, c, reps):
    tiles = "bm=%d,bn=%d" % (c["BM"], c["BN"])
    if "BK" in c:
        tiles += ",bk=%d" % c["BK"]
    cmd = [os.path.join(build, "aicm-run"), "-q", "--threads=1", "--bench=%d" % reps,
           "--pass=%s,lower-tiled{%s}" % (FUSE, tiles), path]
    if engine != "tile":
        cmd.insert(1, "--engine=" + engine)
    r = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"^bench cpu: min [0-9.]+ ms, median ([0-9.]+) ms", r.stdout, re.M)
    if r.returncode != 0 or not m:
        sys.stderr.write("calibrate: aicm-run failed on %s %s: %s\n" % (path, tiles, (r.stderr or r.stdout).strip()[-300:]))
        return None
    return float(m.group(1))


def distinct(scores):
    seen, out = set(), []
    for c in scores:
        if "score" not in c:
            continue
        key = (c["BM"], c["BN"], c.get("BK", 0))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def l2_kb(level):
    """cpu0's data or unified cache of that level (sysfs, else getconf), KB: the L2 a
    program's tiles must fit, the L1 a dot's accumulator must fit."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    for idx in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, idx, "level")) as f:
                if f.read().strip() != str(level):
                    continue
            with open(os.path.join(base, idx, "type")) as f:
                if f.read().strip() == "Instruction":
                    continue
            with open(os.path.join(base, idx, "size")) as f:
                v = f.read().strip()
            return float(v[:-1]) * (1024 if v.endswith("M") else 1) if v[-1] in "KM" else float(v) / 1024
        except OSError:
            continue
    # no sysfs cache listing (some VMs have none): glibc's, from CPUID
    try:
        v = subprocess.run(["getconf", "LEVEL1_DCACHE_SIZE" if level == 1 else "LEVEL%d_CACHE_SIZE" % level],
                           capture_output=True, text=True, check=True).stdout.strip()
        if v.isdigit() and int(v) > 0:
            return int(v) / 1024
    except (OSError, subprocess.CalledProcessError):
        pass
    guess = 1024.0 if level == 2 else 32.0
    sys.stderr.write("calibrate: no size for the L%d cache (sysfs, getconf); taking %g KB\n" % (level, guess))
    return guess


# this machine's caches, KB; a log records the caches it was timed on
# ("# caches: L1 .. KB, L2 .. KB"), and fitting it again uses those
CACHES = (l2_kb(1), l2_kb(2))


def features(c, dt, l2, l1, streams=0.0, native=True):
    """The row of one timing; l2 the KB a program's tiles must fit (0: no
    such term), l1 the KB a dot's accumulator must fit (0: always charged),
    streams the rows a core reads fastest side by side (0: no such term),
    as cost_score reads the target's l2-kb, l1-kb and streams.  The last
    two terms (rows in flight, a's block read again per strip) are the
    native engine's: for the tile engine (native False) they are 0."""
    mm = c["mm_flops"] + c["pad_mm_flops"]
    vec = c["flops"] - c["mm_flops"] + c["pad_vec_flops"]
    f64 = dt == "f64"
    # bytes: loaded and stored, the lines short runs waste, and the ops'
    # tile traffic when the tiles outgrow the cache (all at one bandwidth)
    spill = c["tile_bytes"] if l2 > 0 and c["tile_foot"] > l2 * 1024 else 0.0
    return [1.0, c["loaded"] + c["stored"] + c["line_waste"] + spill, mm if f64 else 0.0, 0.0 if f64 else mm,
            vec if f64 else 0.0, 0.0 if f64 else vec, c["programs"], c["loop_steps"] - c.get("attn_steps", 0),
            c["acc_bytes"] if l1 <= 0 or c["mm_foot"] > l1 * 1024 else 0.0,
            # a row's segments continue its stream where rows in flight are charged
            c["segs"] - (c.get("fly_segs", 0.0) if native and streams > 0 and c.get("fly_rows", 0) > 0 else 0.0),
            c.get("attn_steps", 0),
            # rows in flight: the bytes times the halvings or doublings
            # between the rows a reduction's program walks at once and
            # the streams the core reads fastest
            c.get("fly_bytes", 0.0) * abs(np.log2(c["fly_rows"] / streams))
            if native and streams > 0 and c.get("fly_rows", 0) > 0 else 0.0,
            c.get("a_reread", 0.0) if native and c.get("a_foot", 0) > COST_L1 else 0.0]


# Which cache each threshold stands for, tried in the fit: l2-kb (a
# program's tiles) the L2, a half, a quarter or an eighth of it (what the
# input and output streams leave), the L1 or none; l1-kb (a dot's
# accumulator) the L1, the L2 or always (0).
def thresholds(l1_kb, l2_kb):
    return [(l2, l1) for l2 in (l2_kb, l2_kb / 2, l2_kb / 4, l2_kb / 8, l1_kb, 0.0) for l1 in (l1_kb, l2_kb, 0.0)]


# The rows a core reads fastest side by side, tried in the fit of the
# native engine (0: no such term)
STREAMS = (0.0, 2.0, 4.0, 8.0, 16.0)


def graphs(tmp, dtypes, which):
    """The calibration graphs: "all" (W1..W5 and EXTRA), "workloads"
    (W1..W5), or a comma list of names (bench/w's w1..w5 and w1s..w5s,
    and EXTRA's), e.g. "w2s,ew-small" for a quick run of the procedure."""
    if which == "all":
        names = ["w1", "w2", "w3", "w4", "w5"] + list(EXTRA)
    elif which == "workloads":
        names = ["w1", "w2", "w3", "w4", "w5"]
    else:
        names = which.split(",")
    out = []
    for dt in dtypes:
        for n in names:
            if n in EXTRA:
                p = os.path.join(tmp, "%s-%s.aicm" % (n, dt))
                with open(p, "w") as f:
                    f.write(EXTRA[n].replace("DT", dt) + "\n")
            else:
                p = os.path.join(HERE, "w", "%s-%s.aicm" % (n, dt))
                if not os.path.exists(p):
                    sys.exit("calibrate: --graphs names no calibration graph, found '%s' (expected "
                             "all, workloads, or names among %s and bench/w's)" % (n, ", ".join(EXTRA)))
            out.append(("%s-%s" % (n, dt), p))
    return out


def nnls(a, b):
    """Least squares with every coefficient >= 0, by elimination."""
    free = list(range(a.shape[1]))
    x = np.zeros(a.shape[1])
    while free:
        sol = np.linalg.lstsq(a[:, free], b, rcond=None)[0]
        if (sol >= 0).all():
            x[free] = sol
            break
        free.pop(int(np.argmin(sol)))
    return x


ENGINES = {"cpu-tile": "tile", "cpu": "native"}


def target_engine(args):
    """--target and --engine, the engine by default the one the target models."""
    target = opt(args, "target", "cpu-tile")
    if target not in ENGINES:
        sys.exit("calibrate: --target names no cpu target, found '%s' (expected cpu-tile or cpu)" % target)
    engine = opt(args, "engine", ENGINES[target])
    if engine not in ("tile", "native"):
        sys.exit("calibrate: --engine names no engine, found '%s' (expected tile or native)" % engine)
    return target, engine


def write_row(path, target, comment, row):
    """Puts row (and its comment line) into path's cost_targets table in
    place of the target's row and the comment an earlier write left above it."""
    with open(path) as f:
        lines = f.read().split("\n")
    at = [i for i, l in enumerate(lines) if l.startswith('\t{"%s", ' % target)]
    if len(at) != 1:
        sys.exit("calibrate: --write found %d rows of target '%s' in '%s', expected 1" % (len(at), target, path))
    i = at[0]
    if i > 0 and lines[i - 1].startswith("\t/* %s: bench/calibrate.py fit" % target):
        i -= 1
    lines[i:at[0] + 1] = [comment, row]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print("wrote the row of '%s' into %s" % (target, path))


def fit(args):
    build = opt(args, "build", "build")
    target, engine = target_engine(args)
    reps = int(os.environ.get("REPS", "5"))
    every = int(os.environ.get("EVERY", "1"))
    dtypes = opt(args, "dtypes", "f64,f32").split(",")
    rows, ts, kinds, names, dts, graph = [], [], [], [], [], []
    known = {}
    # when and under what load the timings were taken: this run's, or
    # the log's own lines ("# timed ...") when an earlier run is fitted again
    now = lambda: (datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), open("/proc/loadavg").read().split()[0])
    when = [now()]
    caches = CACHES
    logs = [l for l in opt(args, "times", "").split(",") if l]
    if logs:
        # the timings of earlier runs (their stderr logs), fitted again,
        # each config at its least time among them, with the caches of
        # the machine that timed them
        when, seen = [], set()
        for log in logs:
            with open(log) as f:
                for l in f:
                    m = re.match(r"^  (.*\S)\s+([0-9.]+) ms$", l)
                    if m:
                        t = float(m.group(2))
                        known[m.group(1)] = min(t, known.get(m.group(1), t))
                    m = re.match(r"^# timed at (\S+ \S+) UTC, load (\S+)$", l)
                    if m:
                        when.append((m.group(1), m.group(2)))
                    m = re.match(r"^# caches: L1 ([0-9.]+) KB, L2 ([0-9.]+) KB$", l)
                    if m:
                        seen.add((float(m.group(1)), float(m.group(2))))
        if len(seen) > 1:
            sys.exit("calibrate: --times: the logs were timed on different caches (%s), expected one machine's" %
                     ", ".join("L1 %g KB, L2 %g KB" % c for c in sorted(seen)))
        caches = seen.pop() if seen else CACHES
        when.sort()
        when = when or [("(date unknown)", "unknown")]
    else:
        sys.stderr.write("# timed at %s UTC, load %s\n" % when[0])
        sys.stderr.write("# caches: L1 %g KB, L2 %g KB\n" % CACHES)
    cache_l1, cache_l2 = caches
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in graphs(tmp, dtypes, opt(args, "graphs", "all")):
            rec = report(build, path, target)
            cands = distinct(rec["scores"])
            if len(cands) > 24 and every > 1 and not known:
                cands = cands[::every]
            for c in cands:
                label = "%s BM=%d BN=%d%s" % (name, c["BM"], c["BN"], " BK=%d" % c["BK"] if "BK" in c else "")
                if known:
                    t = known.get(label)
                else:
                    t = time_config(build, engine, path, c, reps)
                if t is None:
                    continue
                dts.append(rec["dtype"])
                graph.append(name)
                rows.append(c)
                ts.append(t)
                kinds.append(rec["kind"])
                names.append(label)
                sys.stderr.write("  %-40s %9.3f ms\n" % (names[-1], t))
    if not known:
        when.append(now())
        sys.stderr.write("# timed at %s UTC, load %s\n" % when[-1])
    t = np.array(ts)
    if not len(t):
        sys.exit("calibrate: no timings to fit")
    w = 1.0 / t
    # every pair of cache thresholds solved; kept: the one whose fitted
    # model picks best among the timed configs (the mean log of each
    # graph's pick / fastest), then the least squared error: what autotune
    # needs is the order within a kernel's space, which the squared error
    # of the times weighs only indirectly
    def pick_score(pred):
        r = []
        for gname in dict.fromkeys(graph):
            sel = [i for i in range(len(t)) if graph[i] == gname]
            r.append(np.log(t[min(sel, key=lambda i: pred[i])] / min(t[sel])))
        return float(np.mean(r))
    best = None
    # The rows term's rate is chosen like the thresholds, by the picks:
    # least squares gives it no weight (it orders the tilings of the few
    # reductions over long rows, W2's, by 10-40%, where the other kinds'
    # errors are 20-30% of every timing), so it is held at each of a range
    # of rates (ms per byte and halving) while the rest is solved
    native = engine == "native"
    ROW = FEATURES.index("rows")
    for l2, l1 in thresholds(cache_l1, cache_l2):
        for st in STREAMS if native else (0.0,):
            a = np.array([features(c, dts[i], l2, l1, st, native) for i, c in enumerate(rows)])
            keep = [j for j in range(a.shape[1]) if j != ROW]
            err0 = None
            for k in [0.0] + [2.5e-10 * 2 ** i for i in range(9)] if st > 0 else [0.0]:
                x = np.zeros(a.shape[1])
                x[ROW] = k
                x[keep] = nnls(a[:, keep] * w[:, None], 1.0 - k * a[:, ROW] * w)
                err = float(np.sum(((a @ x) * w - 1.0) ** 2))
                err0 = err if err0 is None else err0
                # a rate that buys W2's picks with the other kinds'
                # fit (their rates pushed off to make room) is not kept
                if err > 1.05 * err0:
                    continue
                key = (round(pick_score(a @ x), 9), err)
                if best is None or key < best[0]:
                    best = (key, l2, l1, a, x, st)
    _, l2_kb, l1_kb, a, x, streams = best
    if x[ROW] <= 0:
        streams = 0.0
    pred = a @ x
    # constants in the target's units (ms per unit of each feature)
    inv = lambda v, scale: (1.0 / (v * scale)) if v > 0 else 0.0
    const = {
        "launch_us": x[0] * 1e3,
        "hbm_gbs": inv(x[1], 1e6),
        "tc_tflops_f64": inv(x[2], 1e9),
        "tc_tflops_f32": inv(x[3], 1e9),
        "vec_tflops_f64": inv(x[4], 1e9),
        "vec_tflops_f32": inv(x[5], 1e9),
        "wave_us": x[6] * 1e3,
        "step_us": x[7] * 1e3,
        "acc_gbs": inv(x[8], 1e6),
        "seg_ns": x[9] * 1e6,
        "attn_step_us": x[10] * 1e3,
        "rows_gbs": inv(x[ROW], 1e6),
        "reread_gbs": inv(x[12], 1e6),
    }
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    fam = mod = ""
    with open("/proc/cpuinfo") as f:
        txt = f.read()
        m1, m2 = re.search(r"^cpu family\s*:\s*(\d+)", txt, re.M), re.search(r"^model\s*:\s*(\d+)", txt, re.M)
        fam, mod = (m1.group(1) if m1 else "?"), (m2.group(1) if m2 else "?")
    rel = np.abs(pred - t) / t
    span = "%s to %s UTC, load %s to %s" % (when[0][0], when[-1][0][-5:], when[0][1], when[-1][1])
    print("fit of target '%s' on the %s engine: %d timings, %s, family %s model %s, timed %s" % (
        target, engine, len(t), cpu, fam, mod, span))
    for k, v in const.items():
        print("  %-10s %.6g" % (k, v))
    name = lambda v, what: "%g (the L1)" % v if v == cache_l1 and v > 0 else "%g (the L2)" % v if v == cache_l2 else (
        "%g (1/%g of the L2)" % (v, cache_l2 / v)) if v > 0 else what
    print("  tiles must fit l2-kb %s; a dot's accumulator l1-kb %s; streams %g%s" % (
        name(l2_kb, "0 (no such term)"), name(l1_kb, "0 (always charged)"), streams,
        "" if streams > 0 else " (no such term)"))
    print("relative error of the fit: median %.1f%%, 90th percentile %.1f%%" % (
        100 * np.median(rel), 100 * np.percentile(rel, 90)))
    for k in sorted(set(kinds)):
        sel = [i for i in range(len(t)) if kinds[i] == k]
        print("  %-16s %3d timings, median error %.1f%%" % (k, len(sel), 100 * np.median(rel[sel])))
    # what the fit is for: per graph, the fitted model's pick among the
    # timed configs against the fastest of them
    print("per graph, the fitted model's pick among the timed configs / the fastest:")
    worst = []
    for gname in dict.fromkeys(graph):
        sel = [i for i in range(len(t)) if graph[i] == gname]
        pk = min(sel, key=lambda i: pred[i])
        bs = min(sel, key=lambda i: t[i])
        worst.append(t[pk] / t[bs])
        print("  %-20s %-28s %8.3f ms  fastest %-28s %8.3f ms  ratio %.3f" % (
            gname, names[pk][len(gname) + 1:], t[pk], names[bs][len(gname) + 1:], t[bs], t[pk] / t[bs]))
    print("  median ratio %.3f, worst %.3f" % (np.median(worst), max(worst)))
    share = (a * x).sum(axis=0) / pred.sum()
    print("share of the predicted time per term: " + ", ".join("%s %.1f%%" % (FEATURES[i], 100 * share[i]) for i in range(len(x))))
    f = lambda v: ("%.4g" % v)
    # one core (sms=1); vec and tc peaks for both dtypes alike (fitted on both)
    print("cost_targets row (passes/cost.c):")
    # the logs it was fitted from, when --times named them: the row can be
    # fitted again from them (tests/calibrate.sh does)
    top = os.path.dirname(HERE)
    src = "; timings %s" % ", ".join(os.path.relpath(os.path.abspath(l), top) for l in logs) if logs else ""
    comment = "\t/* %s: bench/calibrate.py fit on the %s engine, %d timings, %s (family %s model %s), %s%s */" % (
        target, engine, len(t), cpu, fam, mod, span, src)
    # a term the fit dropped (0) is written as a tiny peak or a huge
    # bandwidth, since the target's peaks and bandwidths must be above 0
    g = lambda v: f(v) if v > 0 else "1e9"
    row = '\t{"%s", %s, 1, 512, 16777216, 65536, %s, %s, %s, %s, %s, %s, %s, %s, %s, %g, %g, %s, %g, %s, %s},' % (
        target, g(const["hbm_gbs"]), g(const["tc_tflops_f64"]), g(const["tc_tflops_f32"]),
        g(const["vec_tflops_f64"]), g(const["vec_tflops_f32"]), f(const["launch_us"]), f(const["wave_us"]),
        f(const["step_us"]), f(const["acc_gbs"]), f(const["seg_ns"]), l2_kb, l1_kb, f(const["attn_step_us"]),
        streams, f(const["rows_gbs"]), f(const["reread_gbs"]))
    print(comment)
    print(row)
    if opt(args, "write", ""):
        write_row(opt(args, "write", ""), target, comment, row)


def sweep(args):
    build = opt(args, "build", "build")
    target, engine = target_engine(args)
    reps = int(os.environ.get("REPS", "5"))
    coarse = float(os.environ.get("COARSE", "0"))
    confirm = int(os.environ.get("CONFIRM", "3"))
    fine = total = 0
    wls = opt(args, "workloads", "w1,w2,w3,w4,w5").split(",")
    dtypes = opt(args, "dtypes", "f64,f32").split(",")
    print("%-8s %-26s %9s  %-26s %9s %7s" % ("workload", "model's pick (%s)" % target, "ms", "best of the sweep", "ms", "ratio"))
    worst = 0.0
    for w in wls:
        for dt in dtypes:
            path = os.path.join(HERE, "w", "%s-%s.aicm" % (w, dt))
            rec = report(build, path, target)
            pick = rec["chosen"]
            cands = distinct(rec["scores"])
            key = (pick["BM"], pick["BN"], pick.get("BK", 0))
            ckey = lambda c: (c["BM"], c["BN"], c.get("BK", 0))
            times = {}
            if coarse > 0:
                rough = {}
                for c in cands:
                    t = time_config(build, engine, path, c, 1)
                    if t is not None:
                        rough[ckey(c)] = t
                lim = min(rough.values()) * (1 + coarse / 100.0) if rough else 0.0
                cands = [c for c in cands if ckey(c) == key or rough.get(ckey(c), lim + 1) <= lim]
                fine += len(cands)
                total += len(rough)
            for c in cands:
                t = time_config(build, engine, path, c, reps)
                if t is not None:
                    times[ckey(c)] = t
            # confirmation: the pick and the sweep's three fastest timed
            # again, alternating, CONFIRM rounds (2): a config's time is the
            # least of its medians, so that a burst of other work during
            # one config's runs does not decide the verdict alone
            top = sorted(times, key=times.get)[:3]
            if key in times and key not in top:
                top.append(key)
            # The sweep's own times do not enter the verdict: the three
            # fastest were chosen for being fastest in one noisy round, so
            # that round's times are biased low against the pick's (the
            # winner's curse; on a flat space it alone decides), and only
            # the confirmation rounds time all four alike.
            byk = {ckey(c): c for c in cands}
            conf = {}
            for _ in range(confirm):
                for k in top:
                    t = time_config(build, engine, path, byk[k], reps)
                    if t is not None:
                        conf[k] = min(conf.get(k, t), t)
            if confirm > 0 and key in conf:
                times = conf
            if key not in times:
                print("%-8s the pick did not run on the %s engine (see the errors above)" % ("%s %s" % (w, dt), engine))
                worst = float("inf")
                continue
            best = min(times, key=times.get)
            cfg = lambda k: "BM=%d BN=%d%s" % (k[0], k[1], " BK=%d" % k[2] if k[2] else "")
            r = times[key] / times[best]
            worst = max(worst, r)
            print("%-8s %-26s %9.3f  %-26s %9.3f %7.3f%s" % ("%s %s" % (w, dt), cfg(key), times[key], cfg(best),
                                                             times[best], r, "" if r <= 1.10 else "  (over 1.10)"))
            sys.stdout.flush()
    if coarse > 0:
        print("coarse then fine: %d configs timed once, the %d within %g%% of each coarse best (and the picks) "
              "again" % (total, fine, coarse))
    print("median CPU time of %d runs per config, 1 thread (the pick and the 3 fastest: the least median of %d "
          "confirmation rounds); target: every pick within 10%% of the best (ratio <= 1.10): %s" % (
              reps, confirm, "met" if worst <= 1.10 else "NOT met"))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("fit", "sweep"):
        sys.stderr.write(__doc__)
        sys.exit(2)
    (fit if sys.argv[1] == "fit" else sweep)(sys.argv[2:])
