#!/usr/bin/python3
"""scaling.py: the tools take time linear in the length of a fused chain.

    tests/scaling.py BUILD_DIR [--sizes 10000,20000,40000] [--runs 4]
                               [--limit 5] [--keep DIR]

An elementwise chain of N ops (unary ops, and every other op a constant
of its own, so that the one kernel that fuse makes of it has N/2 + 1
operands, each loaded, and N + 3 tile values) goes through each path that
issue 14 (item 3) found quadratic, or that could be:

  opt-lower   aicm-opt, shape-infer,fuse,autotune,lower-tiled (printed)
  opt-reparse aicm-opt on its lowered output (parse, verify, print the
              tile IR)
  run-full    aicm-run with the same pipeline (adds the executor's plan)
  run-loops   aicm-run on a tiled body written by hand: N/4 loops in a row
              (the executor's plan asked, per loop, questions of the whole
              body)

For each path the ratio of the time at the largest size to the time at
the smallest must be at most --limit (5: 4x the ops, with room for the
larger working set; a quadratic step makes it 16).  Against noise on a
shared machine, without loosening that:

- the figure is CPU time (user + sys of the child, from wait4), not wall
  time, and the best of --runs rounds, the sizes interleaved in each, so
  that a busy neighbour slows all sizes alike;
- one run of a size is the mean of as many back-to-back runs as make it
  as long as the runs of the largest that last SAMPLE (0.3 s) of CPU
  time: in the -O2 build 12 of 10k, 6 of 20k, 3 of 40k (with one run of
  40k, 0.14 s, a loaded machine failed one check in three); CPU
  time on a shared (or virtual) machine is faster or slower by the moment
  (by 1.5x on the build machine, as the other core is busy or not), and a
  short run that falls into a fast moment would make the small size's
  best too good and the ratio too high;
- before the runs of a size, one untimed run-full of that size warms the
  memory it needs: a virtual machine that hands freed memory back to its
  host makes a run on fresh pages slower (a 40k run right after 10k runs
  took up to 2x its time);
- the timed runs print to /dev/null (a file adds the page cache's and
  the disk's noise);
- a path over the limit, but not over twice the limit (which no noise
  explains), is measured again, up to EXTRA (6) more rounds, before it fails:
  noise only ever adds time, so more runs bring each best nearer the true
  figure, and a quadratic path stays over the limit however often it runs;
- a path still over the limit after those rounds is counted in
  instructions (callgrind's Ir, which no neighbour and no cache changes),
  at the smallest and the largest size, and that ratio decides: a
  fresh-machine CI run on a faster CPU took 0.026 s at 10k and 0.145 s
  at 40k to re-parse (5.5x, in all 10 rounds) where callgrind counts
  3.94x the instructions, so the time was the working set's, not the
  algorithm's; a quadratic step is 16x in instructions too.  Without
  valgrind (or in a sanitizer build, which valgrind cannot run) the time
  decides.

The run paths use one thread (the kernel is one program).  As a
cross-check, aicm-run on the lowered file (once, untimed) prints what the
full pipeline printed.  docs/perf.md has the figures before and after the
fixes.

Exit status: 0 all paths linear, 1 a path over the limit or a tool that
failed, 2 bad usage.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

PIPE = "shape-infer,fuse,autotune,lower-tiled"
# A sample lasts at least this many CPU seconds: as many runs of the
# largest size as make it (and as many more of the smaller ones as make
# the samples equally long).  A sample of a few tenths of a second rides
# out the machine's moments better than one run of 0.1 s; a slow build
# (sanitizers) gets there in one run.
SAMPLE = 0.3
# Rounds more for a path over the limit (but within twice it).
EXTRA = 6


def chain(n):
    out = ["graph @chain {", "  %x = input() : (4, 8)"]
    p = "%x"
    for i in range(1, n + 1):
        k = i % 4
        if k in (0, 2):
            out.append(f"  %c{i} = const() : (8,)")
            op = f"{'mul' if k == 0 else 'add'}({p}, %c{i})"
        else:
            op = f"{'tanh' if k == 1 else 'neg'}({p})"
        out.append(f"  %v{i} = {op}")
        p = f"%v{i}"
    out.append("}")
    return "\n".join(out) + "\n"


def loops(n):
    """A tiled body of N instructions, N/4 loops in a row, written by hand."""
    out = ["graph @loops {", "  %x = input() : (32, 32)",
           "  %y = tiled @k [reduction] (%x) : () grid=(1, 1) BM=32 BN=32 init=0.0 {",
           "    %z = zeros() : []"]
    p = "%z"
    for i in range(n // 4):
        out += [f"    %a{i} = for %r{i} = 0 to 32 step 32 iter(%c{i} = {p}) {{",
                f"      %t{i} = load %x[%r{i}, 0] : [32, 32]",
                f"      %s{i} = sum(%t{i}, %c{i}) : []",
                f"      yield %s{i}",
                "    }"]
        p = f"%a{i}"
    out += [f"    atomic_add %y[], {p}", "  }", "}"]
    return "\n".join(out) + "\n"


def cpu(argv, out=os.devnull):
    """Runs argv with stdout to the file out; returns its user+sys seconds."""
    with open(out, "wb") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.PIPE)
        err = p.stderr.read()
        p.stderr.close()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stderr.write(err.decode(errors="replace"))
        raise RuntimeError(f"exit {p.returncode}: {' '.join(argv)}")
    return ru.ru_utime + ru.ru_stime


def instructions(argv):
    """Runs argv under callgrind; returns the instructions it executed, or
    None when valgrind is missing or cannot run it (a sanitizer build)."""
    if not shutil.which("valgrind"):
        return None
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                       + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    m = re.search(rb"I\s+refs:\s+([\d,]+)", p.stderr)
    if p.returncode != 0 or not m:
        return None
    return int(m.group(1).replace(b",", b""))


def main():
    args = sys.argv[1:]
    sizes, runs, limit, keep = [10000, 20000, 40000], 4, 5.0, None
    if not args or args[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    build = args.pop(0)
    while args:
        a = args.pop(0)
        if a in ("--sizes", "--runs", "--limit", "--keep") and args:
            v = args.pop(0)
            if a == "--sizes":
                sizes = [int(s) for s in v.split(",")]
            elif a == "--runs":
                runs = int(v)
            elif a == "--limit":
                limit = float(v)
            else:
                keep = v
        else:
            sys.stderr.write(f"scaling.py: unknown argument '{a}'\n")
            return 2
    opt = os.path.join(build, "aicm-opt")
    run = os.path.join(build, "aicm-run")
    tmp = keep or tempfile.mkdtemp(prefix="aicm-scaling.")
    os.makedirs(tmp, exist_ok=True)
    try:
        return measure(opt, run, tmp, sizes, runs, limit)
    finally:
        if not keep:
            shutil.rmtree(tmp)


def measure(opt, run, tmp, sizes, runs, limit):
    paths = ["opt-lower", "opt-reparse", "run-full", "run-loops"]
    best = {(p, n): float("inf") for p in paths for n in sizes}
    t0 = time.monotonic()
    for n in sizes:
        with open(os.path.join(tmp, f"chain{n}.aicm"), "w") as f:
            f.write(chain(n))
        with open(os.path.join(tmp, f"loops{n}.aicm"), "w") as f:
            f.write(loops(n))

    def cmds(n):
        src = os.path.join(tmp, f"chain{n}.aicm")
        low = os.path.join(tmp, f"lowered{n}.aicm")
        return {
            "lower": [opt, f"--pass={PIPE}", src, "-o", low],
            "opt-lower": [opt, f"--pass={PIPE}", src],
            "opt-reparse": [opt, low],
            "run-full": [run, f"--pass={PIPE}", "--threads=1", src],
            "run-lowered": [run, "--threads=1", low],
            "run-loops": [run, "--threads=1", os.path.join(tmp, f"loops{n}.aicm")],
        }

    def ratio(p):
        return best[p, sizes[-1]] / max(best[p, sizes[0]], 1e-3)

    reps = 1

    def round_(which):
        for n in sizes:
            c = cmds(n)
            k = reps * max(1, sizes[-1] // n)
            cpu(c["run-full"])
            for p in which:
                t = sum(cpu(c[p]) for _ in range(k)) / k
                best[p, n] = min(best[p, n], t)

    try:
        for n in sizes:
            c = cmds(n)
            a, b = (os.path.join(tmp, f"out{n}.{p}") for p in ("run-full", "run-lowered"))
            cpu(c["lower"])
            t = cpu(c["run-full"], a)
            cpu(c["run-lowered"], b)
            with open(a, "rb") as fa, open(b, "rb") as fb:
                if fa.read() != fb.read():
                    print(f"scaling: FAIL: {n} ops: the lowered file does not print "
                          f"what the pipeline printed (--keep DIR keeps the files)")
                    return 1
        reps = max(1, min(8, math.ceil(SAMPLE / max(t, 1e-3))))
        for _ in range(runs):
            round_(paths)
        extra = 0
        while extra < EXTRA:
            again = [p for p in paths if limit < ratio(p) <= 2 * limit]
            if not again:
                break
            round_(again)
            extra += 1
    except RuntimeError as e:
        print(f"scaling: FAIL: {e}")
        return 1
    # A path still over the limit: its instructions decide (see the top).
    counted = {}
    for p in paths:
        if ratio(p) > limit:
            lo, hi = (instructions(cmds(n)[p]) for n in (sizes[0], sizes[-1]))
            if lo and hi:
                counted[p] = hi / lo
    bad = 0
    print("scaling: best CPU seconds (user+sys) of %d runs%s; ratio %d/%d ops, limit %g"
          % (runs, f" (+{extra} for paths over the limit)" if extra else "", sizes[-1],
             sizes[0], limit))
    print("  %-12s" % "path" + "".join("%10d" % n for n in sizes) + "     ratio")
    for p in paths:
        r = counted.get(p, ratio(p))
        ok = r <= limit
        bad += not ok
        note = ""
        if p in counted:
            note = "  instructions %.2fx: %s" % (
                r, "the time is the working set's" if ok else "FAIL: super-linear")
        elif not ok:
            note = "  FAIL: super-linear"
        print("  %-12s" % p + "".join("%10.3f" % best[p, n] for n in sizes) +
              "%10.2f%s" % (ratio(p), note))
    print("scaling: %s (%.1f s)" % ("FAIL" if bad else "PASS", time.monotonic() - t0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
