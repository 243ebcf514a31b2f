#!/bin/sh
# rho.sh: how well the cpu target's cost model ranks tile configurations of
# W1's matmul on this machine's tile executor (docs/perf.md, "Calibrating
# the cpu target").
#
#   sh bench/rho.sh [BUILD_DIR]     env: TOP (20; 0: every tiling), REPS (5), ROUNDS (3),
#                                        THREADS (1), FILE (bench/w/w1-f64.aicm),
#                                        TUNE (extra autotune options, e.g. 'hbm-gbs=20'),
#                                        FIT (0; 1: fit the cpu target's constants)
#
# 1. The model's ranking: aicm-opt --report=json on FILE with
#    shape-infer,fuse{row-fusion=true},autotune{target=cpu-tile}; the scored
#    candidates sorted as autotune sorts them (score, then warps=4, then
#    stages=3, then generation order), and the first TOP distinct tilings
#    (BM, BN, BK) kept: candidates that differ only in warps and stages run
#    the same tile program.
# 2. Each tiling measured with aicm-run --bench=REPS on the same pipeline
#    lowered with lower-tiled{bm,bn,bk} (random inputs, the default seed),
#    ROUNDS times round-robin over the tilings, so that a burst of load
#    from other processes hits every tiling alike; the least time counts.
# 3. Spearman's rho between the model's rank and the measured rank (ties
#    get their average rank), the table, where the model's pick lands, and
#    the rho between the rounds' own rankings: how repeatable the
#    measurement is, the ceiling for any model.
# 4. FIT=1 (with TOP=0, all 64 tilings): the calibration of docs/passes.md,
#    a non-negative least-squares fit, weighted by 1/time, of the measured
#    time = a + b*bytes loaded + c*programs + d*K steps + e*accumulator
#    bytes (the model's own counts, from its JSON report), and the cpu
#    constants it implies for CORES (2) cores: rates times the cores; the
#    per-program and per-step costs are divided by sms in the model, so kept.
set -u
build=${1:-build}
top=${TOP:-20}
reps=${REPS:-5}
rounds=${ROUNDS:-3}
# One thread by default: on a shared machine a second thread mostly measures
# the other processes; and the cpu target's ranking does not depend on the
# core count (its rates are per machine and its per-program and per-step
# costs are divided by sms, so all terms scale alike with the cores).
threads=${THREADS:-1}
file=${FILE:-bench/w/w1-f64.aicm}
[ "$top" = 0 ] && top=1000
tune=${TUNE:-}
py=/usr/bin/python3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/aicm-rho.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cd "$here/.." || exit 2

fuse='shape-infer,fuse{row-fusion=true}'
echo "rho: $file, target cpu-tile${tune:+ ($tune)}, top $top distinct tilings, aicm-run --bench=$reps --threads=$threads, best of $rounds rounds"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/aicm-opt" --pass="$fuse,autotune{target=cpu-tile${tune:+,$tune}}" --report=json "$file" \
    2>"$work/report.json" >/dev/null || { cat "$work/report.json" >&2; exit 1; }
$py - "$work/report.json" "$top" >"$work/model.txt" <<'EOF' || exit 1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
k = [r for r in rows if r.get('pass') == 'autotune' and r['kind'].startswith('matmul')][0]
cands = [dict(c, gen=i) for i, c in enumerate(k['scores']) if 'score' in c]
cands.sort(key=lambda c: (c['score'], c['warps'] != 4, c['stages'] != 3, c['gen']))
seen = []
for c in cands:
    t = (c['BM'], c['BN'], c['BK'])
    if t in seen:
        continue
    seen.append(t)
    es = 4 if k['dtype'] == 'f32' else 8
    steps = c.get('loop_steps', 0)
    print(len(seen), c['BM'], c['BN'], c['BK'], repr(c['score']), c['loaded'] + c['stored'],
          c['programs'], steps, 2 * steps * c['BM'] * c['BN'] * es, k['problem']['m'],
          k['problem']['n'], k['problem']['k'])
    if len(seen) == int(sys.argv[2]):
        break
EOF
: >"$work/times.txt"
r=1
while [ "$r" -le "$rounds" ]; do
	while read -r rank bm bn bk score rest; do
		ms=$("$build/aicm-run" --pass="$fuse,lower-tiled{bm=$bm,bn=$bn,bk=$bk}" \
		    --bench="$reps" --threads="$threads" "$file" |
		    sed -n 's/^bench: .* min \([0-9.]*\) ms.*/\1/p')
		[ -n "$ms" ] || { echo "rho: aicm-run failed on BM=$bm BN=$bn BK=$bk" >&2; exit 1; }
		echo "$rank $ms $r" >>"$work/times.txt"
	done <"$work/model.txt"
	r=$((r + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
FIT=${FIT:-0} $py - "$work/model.txt" "$work/times.txt" <<'EOF'
import os, sys
model = [l.split() for l in open(sys.argv[1])]
best, byround = {}, {}
for l in open(sys.argv[2]):
    rank, ms, rnd = l.split()
    best[int(rank)] = min(best.get(int(rank), float('inf')), float(ms))
    byround.setdefault(int(rnd), {})[int(rank)] = float(ms)

def ranks(v):
    """1-based ranks, ties averaged (Spearman's convention)."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for q in range(i, j + 1):
            r[order[q]] = (i + j) / 2 + 1
        i = j + 1
    return r

def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sx = sum((a - mx) ** 2 for a in rx) ** 0.5
    sy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (sx * sy) if sx > 0 and sy > 0 else float('nan')

scores = [float(m[4]) for m in model]
times = [best[int(m[0])] for m in model]
rm, rt = ranks(scores), ranks(times)
n = len(model)
rho = spearman(scores, times)
print("| model rank | BM | BN | BK | model score, ms | measured, ms | measured rank |")
print("|-----------:|---:|---:|---:|----------------:|-------------:|--------------:|")
for m, a, t, b in zip(model, rm, times, rt):
    print("| %g | %s | %s | %s | %.3f | %.3f | %g |" % (a, m[1], m[2], m[3], float(m[4]), t, b))
fast = min(range(n), key=lambda i: times[i])
print()
print("Spearman's rho (model rank vs measured rank, %d tilings): %.3f" % (n, rho))
print("the model's pick BM=%s BN=%s BK=%s: %.3f ms, measured rank %g of %d; the fastest: "
      "BM=%s BN=%s BK=%s, %.3f ms (model rank %g)" % (model[0][1], model[0][2], model[0][3],
      times[0], rt[0], n, model[fast][1], model[fast][2], model[fast][3], times[fast], rm[fast]))
# The measurement's own repeatability bounds what any model can reach: the
# rho of one round's measured ranks against another's.
rr = [spearman([byround[a][int(m[0])] for m in model], [byround[b][int(m[0])] for m in model])
      for a in byround for b in byround if a < b]
if rr:
    print("repeatability: rho between rounds' measured ranks: %s (mean %.3f)" %
          (", ".join("%.3f" % v for v in rr), sum(rr) / len(rr)))
if os.environ.get('FIT') == '1':
    import numpy as np
    m, nn, kk = (int(v) for v in model[0][9:12])
    flops = 2.0 * m * nn * kk
    X = np.array([[1.0, float(r[5]) / 1e9, float(r[6]) / 1e3, float(r[7]) / 1e6,
                   float(r[8]) / 1e9] for r in model])
    y = np.array(times)
    w = 1 / y
    act = list(range(X.shape[1]))
    while True:                       # NNLS by dropping negative terms
        c = np.zeros(X.shape[1])
        sol = np.linalg.lstsq(X[:, act] * w[:, None], y * w, rcond=None)[0]
        if (sol >= 0).all():
            c[act] = sol
            break
        act = [a for a, v in zip(act, sol) if v > 0]
    p = X @ c
    print()
    print("fit on %d tilings (one core): a = %.2f ms, b = %.2f ms/GB, c = %.2f us/program, "
          "d = %.3f us/step, e = %.2f ms/GB; rho(fit, measured) = %.3f" %
          (n, c[0], c[1], c[2], c[3], c[4], spearman(list(p), times)))
    cores = int(os.environ.get('CORES', '2'))
    inv = lambda v: 1e3 / v if v > 0 else float('inf')
    print("cpu constants for %d cores: tc-tflops=%.3g hbm-gbs=%.3g wave-us=%.3g step-us=%.3g "
          "acc-gbs=%.3g" % (cores, flops / (c[0] * 1e-3) / 1e12 * cores if c[0] > 0 else 0,
          inv(c[1]) * cores, c[2], c[3], inv(c[4]) * cores))
EOF
