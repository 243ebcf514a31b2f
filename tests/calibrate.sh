#!/bin/sh
# calibrate.sh: bench/calibrate.py's fit, checked without a clock (issue 18
# item 6).  `make calibrate` times every tiling of its graphs and writes the
# fitted rows into passes/cost.c; this test feeds the fit a log whose
# "timings" are the cpu-tile model's own scores for two small graphs (the
# small suite's W1 and W2, every distinct tiling), so that the constants and
# cache thresholds that produced them fit the log exactly (error 0.0%; with
# the thresholds' search broken it is not): the fitted model must then pick, on every graph, the tiling the log says is fastest (ratio
# 1.000), and --write must put its row and one comment line in place of the
# cpu-tile row of a copy of passes/cost.c, twice over without piling up
# comments, leaving the other rows alone.  Then each cpu row of
# passes/cost.c must be what its timings (bench/cal/, named in its comment)
# fit.  A few seconds, numpy needed.
#
#   sh tests/calibrate.sh [BUILD_DIR]
set -u
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
if ! $py -c 'import numpy' 2>/dev/null; then
	echo "calibrate: SKIPPED: python3-numpy is not installed"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/aicm-calibrate.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
fail=0

# the log: every distinct tiling's score as its time, as calibrate.py's
# fit prints a timing ("  NAME BM=.. BN=..[ BK=..]   T ms")
for w in w1s w2s; do
	"$B/aicm-opt" --pass='shape-infer,fuse{row-fusion=true},autotune{target=cpu-tile}' --report=json \
	    "$top/bench/w/$w-f64.aicm" 2>&1 >/dev/null | grep '^{"pass":"autotune"' |
	    $py -c '
import json, sys
rec = json.loads(sys.stdin.readline())
seen = set()
for c in rec["scores"]:
    k = (c["BM"], c["BN"], c.get("BK", 0))
    if "score" in c and k not in seen:
        seen.add(k)
        print("  %s-f64 BM=%d BN=%d%s %.17g ms" % (sys.argv[1], k[0], k[1], " BK=%d" % k[2] if k[2] else "", c["score"]))
' "$w" >>"$T/times.log" || fail=1
done
n=$(grep -c ' ms$' "$T/times.log")
[ "$n" -ge 20 ] || { echo "calibrate: expected 20 or more tilings in the log, got $n"; fail=1; }

cp "$top/passes/cost.c" "$T/cost.c"
fit() {
	$py "$top/bench/calibrate.py" fit --target=cpu-tile --build="$B" --graphs=w1s,w2s --dtypes=f64 \
	    --times="$T/times.log" --write="$T/cost.c" >"$T/fit.out" 2>"$T/fit.err"
}
if ! fit; then
	echo "calibrate: the fit failed:"
	sed 's/^/    /' "$T/fit.err" | tail -5
	fail=1
fi
if ! grep -q '^relative error of the fit: median 0\.0%, 90th percentile 0\.0%$' "$T/fit.out" ||
    ! grep -q '^  median ratio 1\.000, worst 1\.000$' "$T/fit.out"; then
	echo "calibrate: the fit of the model's own scores did not reproduce them, or did not pick the fastest tiling of every graph:"
	grep -E 'ratio|tiles must fit' "$T/fit.out" | sed 's/^/    /'
	fail=1
fi
fit
rows=$(grep -c '^	{"cpu-tile", ' "$T/cost.c")
notes=$(grep -c '^	/\* cpu-tile: bench/calibrate.py fit on the tile engine, [0-9]* timings' "$T/cost.c")
above=$(grep -B1 '^	{"cpu-tile", ' "$T/cost.c" | head -1 | grep -c '^	/\* cpu-tile: bench/calibrate.py fit')
row=$(grep '^	{"cpu-tile", ' "$T/cost.c")
fields=$(printf '%s\n' "$row" | tr ',' '\n' | grep -c '[0-9]')
if [ "$rows" != 1 ] || [ "$notes" != 1 ] || [ "$above" != 1 ] || [ "$fields" != 20 ]; then
	echo "calibrate: --write twice: expected 1 cpu-tile row of 20 numbers under 1 comment, got $rows rows" \
	    "($fields numbers), $notes comments, comment above: $above"
	fail=1
fi
if ! grep -qF "$row" "$T/fit.out"; then
	echo "calibrate: --write wrote a row other than the one the fit printed"
	fail=1
fi
# every line but the cpu-tile row and its comment as it was
grep -v '"cpu-tile", \|^	/\* cpu-tile: bench/calibrate.py' "$top/passes/cost.c" >"$T/before"
grep -v '"cpu-tile", \|^	/\* cpu-tile: bench/calibrate.py' "$T/cost.c" >"$T/after"
if ! cmp -s "$T/before" "$T/after"; then
	echo "calibrate: --write changed lines other than the cpu-tile row and its comment:"
	diff "$T/before" "$T/after" | head -10 | sed 's/^/    /'
	fail=1
fi

# The rows in passes/cost.c are what their timings fit: each cpu row's
# comment names the logs it was fitted from (bench/cal/, kept by `make
# calibrate`), and fitting them again, with the caches the logs record,
# must give the row to the last digit.  Each log's configs are told the
# model's features by this build's autotune, so a change to the cost
# model's terms that would move a fitted row shows here, and the row must
# be fitted again (make calibrate, or calibrate.py fit --times=THOSE LOGS
# --write=passes/cost.c).
babs=$(cd "$B" && pwd)
for t in cpu-tile cpu; do
	note=$(grep "^	/\* $t: bench/calibrate.py fit" "$top/passes/cost.c")
	logs=$(printf '%s\n' "$note" | sed -n 's/.*; timings \(.*\) \*\/$/\1/p' | sed 's/, /,/g')
	if [ -z "$logs" ]; then
		echo "calibrate: the $t row's comment names no timings (expected '; timings bench/cal/...')"
		fail=1
		continue
	fi
	if ! (cd "$top" && $py bench/calibrate.py fit --target="$t" --build="$babs" --times="$logs") \
	    >"$T/refit-$t.out" 2>"$T/refit-$t.err"; then
		echo "calibrate: fitting the $t row's timings again failed:"
		tail -5 "$T/refit-$t.err" | sed 's/^/    /'
		fail=1
		continue
	fi
	want=$(grep "^	{\"$t\", " "$top/passes/cost.c")
	got=$(grep "^	{\"$t\", " "$T/refit-$t.out")
	if [ "$want" != "$got" ]; then
		echo "calibrate: the $t row in passes/cost.c is not the fit of its timings ($logs):"
		echo "    passes/cost.c: $want"
		echo "    their fit:     $got"
		fail=1
	fi
done

[ $fail = 0 ] && echo "calibrate: the fit of the model's own scores, --write, and the cpu rows' refit from their timings passed"
exit $fail
