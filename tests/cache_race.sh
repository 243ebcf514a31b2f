#!/bin/sh
# cache_race.sh: concurrent runs sharing one tuning cache lose no record.
#
#   sh tests/cache_race.sh SCRATCH_DIR [ROUNDS [KERNELS]]
#
# Two aicm-opt processes run side by side, each ROUNDS times in a row, each
# run tuning KERNELS matmul kernels that no other run has (their shapes
# differ) into the same cache file.  Every run adds its records, so at the
# end the file must hold all 2 x ROUNDS x KERNELS of them, each once, and
# no run may have warned or failed.  Without the lock and the merge on
# write (passes/tune_cache.c) the last writer wins and records are lost.
# aicm-opt is taken from PATH (tests/golden.sh puts the build first:
# testdata/autotune/cache-race.aicm runs this).
dir=${1:?usage: cache_race.sh SCRATCH_DIR [ROUNDS [KERNELS]]}
rounds=${2:-40}
# under memcheck (make check-valgrind) a run takes a second, not a few ms
[ "${AICM_VALGRIND:-0}" = 1 ] && [ $# -lt 2 ] && rounds=5
kernels=${3:-6}
mkdir -p "$dir" || exit 2
cache=$dir/race.cache
rm -f "$cache" "$cache.lock" "$dir"/want "$dir"/err.*

# graph PROC ROUND: KERNELS matmuls of M=PROC*1000+ROUND rows and
# N=8*(j+1) columns, K=32; the key of each is written to $dir/want.
graph() {
	m=$(($1 * 1000 + $2))
	echo "graph {"
	echo "  %a = input() : ($m, 32)"
	j=0
	while [ $j -lt "$kernels" ]; do
		n=$((8 * (j + 1)))
		echo "  %b$j = input() : (32, $n)"
		echo "  kernel @k$j [matmul] {"
		echo "    %d$j = matmul(%a, %b$j) : ($m, $n)"
		echo "  }"
		echo "matmul:matmul(\$0=${m}x32,\$1=32x$n)=${m}x$n" >>"$dir/want"
		j=$((j + 1))
	done
	echo "}"
}

r=1
while [ $r -le "$rounds" ]; do
	graph 1 $r >"$dir/p1-$r.aicm"
	graph 2 $r >"$dir/p2-$r.aicm"
	r=$((r + 1))
done

runs() {
	r=1
	while [ $r -le "$rounds" ]; do
		aicm-opt --pass="autotune{cache=$cache}" "$dir/p$1-$r.aicm" >/dev/null 2>>"$dir/err.$1" ||
		    echo "cache_race: run $r of process $1 failed" >>"$dir/err.$1"
		r=$((r + 1))
	done
}

runs 1 &
p1=$!
runs 2 &
p2=$!
wait $p1
wait $p2

status=0
for p in 1 2; do
	if [ -s "$dir/err.$p" ]; then
		echo "cache_race: process $p wrote to stderr:"
		head -20 "$dir/err.$p"
		status=1
	fi
done
sort "$dir/want" >"$dir/want.sorted"
grep -v '^#' "$cache" | sed 's/ .*//' | sort >"$dir/have.sorted"
want=$(wc -l <"$dir/want.sorted")
have=$(sort -u "$dir/have.sorted" | comm -12 "$dir/want.sorted" - | wc -l)
lines=$(wc -l <"$dir/have.sorted")
if [ "$have" -eq "$want" ] && [ "$lines" -eq "$want" ]; then
	echo "cache_race: every record of both processes is in the cache, once"
else
	echo "cache_race: 2 processes x $rounds rounds x $kernels kernels: $have of $want records, $lines lines"
	echo "cache_race: missing records (first 5):"
	sort -u "$dir/have.sorted" | comm -23 "$dir/want.sorted" - | head -5
	status=1
fi
exit $status
