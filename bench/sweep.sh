#!/bin/sh
# sweep.sh: `make bench`'s check of autotune's picks (issue 18 item 6): per
# workload (W1..W5, f64 and f32), the model's pick and its time against the
# fastest config of a timed sweep of the kind's whole space, and their ratio;
# the target is a pick within 10% of the best (ratio <= 1.10).
#
#   sh bench/sweep.sh [BUILD_DIR]     env: REPS (5), WORKLOADS ("w1 w2 w3 w4 w5"),
#                                          DTYPES ("f64 f32"), TARGETS ("cpu-tile cpu"),
#                                          COARSE (off; e.g. 25), CONFIRM (3)
#
# Each config runs as aicm-run --threads=1 --bench=REPS on
# shape-infer,fuse{row-fusion=true},lower-tiled{bm,bn,bk} and counts the
# median of its runs' process CPU time (bench/calibrate.py's sweep does the
# timing; CPU time because the machine may be shared).  TARGETS lists the
# models checked, each on the engine it models: cpu-tile on the tile
# engine, cpu on the native engine (aicm-run --engine=native; a config
# not yet in its cache is compiled first, outside the timed runs).  A
# quick try of the procedure: WORKLOADS="w2s w5s" DTYPES=f64 REPS=3.
# COARSE=P sweeps coarse then fine (calibrate.py): every config timed once,
# then the pick and the configs within P% of the coarse best REPS times.
# CONFIRM rounds then time the pick and the three fastest again,
# alternating, each keeping the least of its medians in these rounds; the
# verdict compares these times only (the sweep's own times of its three
# fastest are biased low: they were chosen for being fastest).
# Each target's wall time is printed, to plan a run.
set -u
build=${1:-build}
here=$(dirname "$0")
py=/usr/bin/python3
workloads=$(echo "${WORKLOADS:-w1 w2 w3 w4 w5}" | tr ' ' ',')
dtypes=$(echo "${DTYPES:-f64 f32}" | tr ' ' ',')
echo "autotune's picks against a timed sweep (issue 18 item 6): $(date -u '+%Y-%m-%d %H:%M UTC')," \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for target in ${TARGETS:-cpu-tile cpu}; do
	case $target in
	cpu-tile) engine=tile ;;
	cpu) engine=native ;;
	*) echo "sweep: names no cpu target, found '$target' (expected cpu-tile or cpu)" >&2; exit 2 ;;
	esac
	echo "target $target on the $engine engine:"
	t0=$(date +%s)
	$py "$here/calibrate.py" sweep --build="$build" --target="$target" --engine="$engine" \
	    --workloads="$workloads" --dtypes="$dtypes" || exit 1
	echo "target $target swept in $(($(date +%s) - t0)) s (wall)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
