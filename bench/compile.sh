#!/bin/sh
# compile.sh: compile speed of aicm-opt against mlir-opt-16, both comparisons
# of DESIGN §11 side by side, in one run.
#
#   sh bench/compile.sh [BUILD_DIR] [SIZES...]     (default sizes: 1000 10000 100000 1000000)
#   RUNS=5 sh bench/compile.sh build               (runs per figure, default 3)
#
# For each size N, scripts/gen-graph writes the same graph in aicm's text
# form and in MLIR's TOSA dialect.  Two comparisons, each tool reading the
# file, doing the work and printing the result (to /dev/null):
#   infer: aicm-opt --pass=shape-infer            vs  mlir-opt-16 --tosa-infer-shapes
#   full:  aicm-opt --pass=shape-infer,fuse,autotune,lower-tiled (to tiled IR)
#          vs  mlir-opt-16 func.func(tosa-infer-shapes,tosa-to-linalg-named,
#              tosa-to-linalg,linalg-fuse-elementwise-ops)
# Each figure is the fastest of RUNS wall-clock runs of the whole process, by
# hyperfine (the machine may be shared: the minimum is the run least
# disturbed), the mean CPU time (user + system) of those runs, which a busy
# machine inflates less, and the peak memory (max RSS) of one more run from
# /usr/bin/time.  ratio = mlir-opt / aicm-opt, on wall time / on CPU time;
# us/op = aicm's wall time per op.  The load average is printed before and
# after.
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
sizes=${*:-1000 10000 100000 1000000}
runs=${RUNS:-3}
opt="$build/aicm-opt"
mlir=$(command -v mlir-opt-16 || true)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
full=shape-infer,fuse,autotune,lower-tiled
linalg='builtin.module(func.func(tosa-infer-shapes,tosa-to-linalg-named,tosa-to-linalg,linalg-fuse-elementwise-ops))'

# best SECONDS CPU_SECONDS MAX_RSS_MB: the fastest of $runs runs (hyperfine,
# no shell in between), the mean user+system time of those runs, and the
# peak memory of one more run (/usr/bin/time)
best() {
	if ! /usr/bin/time -f "%M" -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err"; then
		echo "FAILED FAILED 0"; cat "$tmp/err" >&2; return
	fi
	hyperfine -N --style none --runs "$runs" --export-csv "$tmp/h.csv" "$*" >/dev/null 2>&1 ||
		{ echo "FAILED FAILED 0"; return; }
	echo "$(awk -F, 'NR == 2 { printf "%.3f %.3f", $(NF - 1), $(NF - 3) + $(NF - 2) }' "$tmp/h.csv")" \
	    "$(($(cat "$tmp/t") / 1024))"
}

# ratio A B: B / A to two decimals, or n/a
ratio() {
	case "$1$2" in *FAILED*|*-*) echo "n/a"; return ;; esac
	printf '%.1f' "$(echo "$2 / $1" | bc -l)"
}

# per-op microseconds: SECONDS OPS
perop() {
	case "$1" in FAILED) echo "n/a"; return ;; esac
	printf '%.2f' "$(echo "$1 * 1000000 / $2" | bc -l)"
}

echo "compile.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
    "best of $runs, $("$opt" --version 2>/dev/null | head -1), ${mlir:-no mlir-opt-16}"
printf '%-8s | %-54s | %-54s\n' "" "parse + shape-infer + print" "whole pipeline: to tiled IR / to linalg"
printf '%-8s | %-6s %-6s %-6s %-4s %-6s %-6s %-4s %-9s | %-6s %-6s %-6s %-4s %-6s %-6s %-4s %-9s\n' ops \
    aicm-s cpu-s us/op MB mlir-s cpu-s MB ratio aicm-s cpu-s us/op MB mlir-s cpu-s MB ratio
row() {        # AICM MLIR: the columns of one comparison
	set -- $1 $2
	printf '%-6s %-6s %-6s %-4s %-6s %-6s %-4s %-9s' "$1" "$2" "$(perop "$1" "$n")" "$3" \
	    "$4" "$5" "$6" "$(ratio "$1" "$4")x/$(ratio "$2" "$5")x"
}
for n in $sizes; do
	scripts/gen-graph "$n" >"$tmp/g.aicm"
	scripts/gen-graph "$n" --tosa >"$tmp/g.mlir"
	a=$(best "$opt" --pass=shape-infer "$tmp/g.aicm")
	f=$(best "$opt" --pass="$full" "$tmp/g.aicm")
	if [ -n "$mlir" ]; then
		m=$(best "$mlir" --tosa-infer-shapes "$tmp/g.mlir")
		l=$(best "$mlir" --pass-pipeline="$linalg" "$tmp/g.mlir")
	else
		m="FAILED FAILED 0"; l="FAILED FAILED 0"
	fi
	printf '%-8s | %s | %s\n' "$n" "$(row "$a" "$m")" "$(row "$f" "$l")"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
