#!/bin/sh
# compile.sh: compile speed of aicm-opt against mlir-opt-16, side by side.
#
#   sh bench/compile.sh [BUILD_DIR] [SIZES...]     (default sizes: 1000 10000 100000 1000000)
#
# For each size N, scripts/gen-graph writes the same graph in aicm's text
# form and in MLIR's TOSA dialect; each tool parses it, infers shapes and
# prints it (aicm-opt --pass=shape-infer; mlir-opt-16 --tosa-infer-shapes),
# best of 3 wall-clock runs, with peak memory (max RSS) from /usr/bin/time.
# If the later passes exist, aicm's whole pipeline to tiled IR is timed too,
# against mlir-opt's tosa-to-linalg-named,tosa-to-linalg,linalg-fuse-elementwise-ops.
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
sizes=${*:-1000 10000 100000 1000000}
opt="$build/aicm-opt"
mlir=$(command -v mlir-opt-16 || true)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# best WALL RSS over 3 runs of a command (output to /dev/null)
best() {
	b=""; r=0
	for _ in 1 2 3; do
		/usr/bin/time -f "%e %M" -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { echo "FAILED"; cat "$tmp/err" >&2; return; }
		set -- "$@"
		w=$(cut -d' ' -f1 "$tmp/t"); m=$(cut -d' ' -f2 "$tmp/t")
		if [ -z "$b" ] || [ "$(echo "$w < $b" | bc -l)" = 1 ]; then b=$w; fi
		[ "$m" -gt "$r" ] && r=$m
	done
	echo "$b $r"
}

full=""
if "$opt" --list-passes | grep -q lower-tiled; then
	full="shape-infer,fuse,autotune,lower-tiled"
	"$opt" --list-passes | grep -q autotune || full="shape-infer,fuse,lower-tiled"
fi

printf '%-9s %-10s %-14s %-10s %-14s %-8s %-8s\n' ops bytes aicm-s aicm-MB mlir-s mlir-MB ratio
for n in $sizes; do
	scripts/gen-graph "$n" >"$tmp/g.aicm"
	scripts/gen-graph "$n" --tosa >"$tmp/g.mlir"
	a=$(best "$opt" --pass=shape-infer "$tmp/g.aicm")
	if [ -n "$mlir" ]; then m=$(best "$mlir" --tosa-infer-shapes "$tmp/g.mlir"); else m="- 0"; fi
	aw=${a% *}; ar=${a#* }; mw=${m% *}; mr=${m#* }
	ratio=$(echo "$mw / $aw" | bc -l 2>/dev/null | cut -c1-6)
	printf '%-9s %-10s %-14s %-10s %-14s %-8s %-8s\n' "$n" "$(wc -c <"$tmp/g.aicm")" "$aw" \
	    "$((ar / 1024))" "$mw" "$((mr / 1024))" "${ratio:-n/a}x"
	if [ -n "$full" ] && [ -n "$mlir" ]; then
		a=$(best "$opt" --pass="$full" "$tmp/g.aicm")
		m=$(best "$mlir" --pass-pipeline='builtin.module(func.func(tosa-infer-shapes,tosa-to-linalg-named,tosa-to-linalg,linalg-fuse-elementwise-ops))' "$tmp/g.mlir")
		aw=${a% *}; mw=${m% *}
		printf '  full pipeline (%s): aicm %ss (%s MB), mlir-opt %ss (%s MB), %sx\n' "$full" \
		    "$aw" "$((${a#* } / 1024))" "$mw" "$((${m#* } / 1024))" \
		    "$(echo "$mw / $aw" | bc -l 2>/dev/null | cut -c1-6)"
	fi
done
