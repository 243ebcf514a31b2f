#!/bin/sh
# ab.sh: is build B slower than build A on `make bench`'s workloads?
#
#   sh bench/ab.sh BUILD_A BUILD_B    env: ROUNDS (5), REPS (30), WORKLOADS ("w1 w2 w3 w4 w5"),
#                                          DTYPES ("f64 f32"), THREADS (1)
#
# DESIGN §16's rule for a "no slower than" claim between two builds: the
# two alternate, A then B, for ROUNDS rounds on each workload, dtype and
# thread count, and are compared on the median CPU time (user + sys, the
# kernel's exact figures from getrusage, not time(1)'s 10 ms ticks) of the
# whole `aicm-run --bench=REPS` process: the same
# lowered pipeline and inputs as bench/run.sh, without numpy.  CPU time
# rather than wall time, since a shared machine's other tenants steal
# wall time from either side at random.  Prints, per row, A's and B's
# median CPU seconds and B/A (above 1: B is slower), and the same for user
# time alone: the system time of a run that faults in hundreds of MB
# swings with the kernel's page compaction (w5: 0.2 to 2 s, whichever
# build runs), and the user column shows what the code itself did.  The
# worst row closes the table.
set -u
[ $# -eq 2 ] || { echo "usage: sh bench/ab.sh BUILD_A BUILD_B" >&2; exit 2; }
a=$1 b=$2
rounds=${ROUNDS:-5}
reps=${REPS:-30}
workloads=${WORKLOADS:-w1 w2 w3 w4 w5}
dtypes=${DTYPES:-f64 f32}
threads=${THREADS:-1}
py=/usr/bin/python3
here=$(dirname "$0")
data="$a/bench-data"
. "$here/tiles.sh"
for x in "$a" "$b"; do
	[ -x "$x/aicm-run" ] || { echo "ab: no $x/aicm-run: build it first" >&2; exit 2; }
done
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "A: $a  B: $b  rounds: $rounds, --bench=$reps, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-4s %-4s %3s %9s %9s %7s %9s %9s %7s\n' wl dt thr A-cpu-s B-cpu-s B/A A-user-s B-user-s B/A
mkdir -p "$data" && : >"$data/ab.txt" || exit 2
for w in $workloads; do
	for dt in $dtypes; do
		d="$data/$w-$dt"
		mkdir -p "$d"
		[ -f "$d/done" ] || { $py "$here/workloads.py" gen "$w" "$dt" "$d" && touch "$d/done"; } || exit 2
		ins=""
		for f in "$d"/*.npy; do
			ins="$ins --input $(basename "$f" .npy)=$f"
		done
		pipe=${AICM_PIPELINE:-shape-infer,fuse\{row-fusion=true\},$(tuned cpu-tile)}
		for t in $threads; do
			: >"$d/ab-a.txt"; : >"$d/ab-b.txt"
			for r in $(seq "$rounds"); do
				for side in a b; do
					eval "bin=\$$side"
					# shellcheck disable=SC2086
					$py "$here/cputime.py" "$d/ab-$side.txt" "$bin/aicm-run" --pass="$pipe" \
					    --threads="$t" --bench="$reps" $ins "$here/w/$w-$dt.aicm" >/dev/null 2>"$d/ab.err" ||
					    { echo "$w $dt: $bin/aicm-run failed:"; tail -3 "$d/ab.err"; exit 1; }
				done
			done
			# med FILE SYS: the median of user + SYS * sys
			med() { awk -v s="$2" '{ print $1 + s * $2 }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
			ma=$(med "$d/ab-a.txt" 1); mb=$(med "$d/ab-b.txt" 1)
			ua=$(med "$d/ab-a.txt" 0); ub=$(med "$d/ab-b.txt" 0)
			awk -v w="$w" -v dt="$dt" -v t="$t" -v ma="$ma" -v mb="$mb" -v ua="$ua" -v ub="$ub" 'BEGIN {
				printf "%-4s %-4s %3s %9.4f %9.4f %7.3f %9.4f %9.4f %7.3f\n", w, dt, t, ma, mb, mb / ma, ua, ub, ub / ua
				printf "%s %s %s %.4f\n", w, dt, t, mb / ma >>"/dev/stderr" }' 2>>"$data/ab.txt"
		done
	done
done
sort -k4 -g "$data/ab.txt" | tail -1 | awk '{ printf "worst: %s %s %s threads, B/A %.3f (%+.1f%%)\n", $1, $2, $3, $4, 100 * ($4 - 1) }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
