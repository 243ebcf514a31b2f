#!/bin/sh
# demo.sh: the seed's six scenarios (DESIGN §10), run with the real tools.
#
#   sh scripts/demo.sh [BUILD_DIR]
#
# For each scenario it prints the exact commands it runs ('$ aicm-opt ...',
# with BUILD_DIR first on PATH; without BUILD_DIR the tools already on PATH
# are used), then what they printed, stdout and stderr together, as a
# terminal would show them when redirected.  Tensor previews longer than
# 40 lines are cut in the middle; the checks always read the whole output.
# It ends with one line per scenario: PASS or FAIL and the figure checked,
# taken from what the tools printed, never recomputed here.  A scenario
# whose pass or engine does not exist yet fails with "not built yet".
# Exit status: 0 when all six pass, 1 otherwise, 2 on bad usage.
#
# The output holds no timing, so that it is a golden test
# (testdata/demo/demo.aicm).
if [ $# -gt 1 ]; then
	echo "usage: sh scripts/demo.sh [BUILD_DIR]" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
if [ $# = 1 ]; then
	bin=$(cd "$1" 2>/dev/null && pwd) || { echo "demo: no build folder '$1'" >&2; exit 2; }
	PATH="$bin:$PATH"
	export PATH
fi
for t in aicm-opt; do
	command -v $t >/dev/null 2>&1 || { echo "demo: '$t' not found; run 'make' first" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aicm-demo.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "aicm demo: the seed's six scenarios, each checked against the seed's figure."
echo "Each step is explained in docs/tutorial.md."
results=""
fails=0

# result N PASS|FAIL "text": one line of the final summary.
result() {
	results="$results$2  scenario $1: $3
"
	[ "$2" = PASS ] || fails=$((fails + 1))
}

# run FILE CMD...: print the command, run it (2>&1) into FILE, show it.
# Returns the command's exit status.
run() {
	out=$1
	shift
	printf '$'
	for a in "$@"; do
		case $a in
		--*=*[!A-Za-z0-9_./=,:%@+-]*) printf " %s='%s'" "${a%%=*}" "${a#*=}" ;;
		*[!A-Za-z0-9_./=,:%@+-]*) printf " '%s'" "$a" ;;
		*) printf ' %s' "$a" ;;
		esac
	done
	echo
	"$@" >"$out" 2>&1
	rc=$?
	awk -v max=40 '
		{ line[NR] = $0 }
		END {
			if (NR <= max) { for (i = 1; i <= NR; i++) print line[i]; exit }
			for (i = 1; i <= 25; i++) print line[i]
			printf "    [... %d lines not shown ...]\n", NR - 35
			for (i = NR - 9; i <= NR; i++) print line[i]
		}' "$out"
	[ $rc = 0 ] || echo "(exit status $rc)"
	return $rc
}

# missing WHAT...: the passes, tools and options not built yet, or nothing.
missing() {
	m=""
	for w in "$@"; do
		case $w in
		aicm-run)
			command -v aicm-run >/dev/null 2>&1 || m="$m aicm-run" ;;
		--stats|--engine=tile)
			if ! command -v aicm-run >/dev/null 2>&1 ||
			    ! aicm-run --help 2>/dev/null | grep -q -- "${w%%=*}"; then
				m="$m aicm-run $w"
			elif [ $w = --engine=tile ] && ! aicm-run --help | grep -q 'engine=tile'; then
				m="$m aicm-run $w"
			fi ;;
		*)
			aicm-opt --list-passes | grep -q "^  $w " || m="$m pass '$w'" ;;
		esac
	done
	echo "${m# }"
}

# scenario N TITLE: the heading.
scenario() {
	echo
	echo "== Scenario $1: $2 =="
}

# field FILE REGEX: the first line of FILE matching REGEX.
field() {
	grep -m1 -E -- "$2" "$1"
}

# ---- 1. graph capture ------------------------------------------------------
scenario 1 "graph capture: y = relu(x @ W + bias).sum(axis=1) as text IR"
run "$tmp/1" aicm-opt --pass=shape-infer testdata/demo/mlp.aicm
rc=$?
n=$(grep -c -E '^ *%[A-Za-z0-9_.]+ = [a-z_]+\(' "$tmp/1")
ni=$(grep -c -E '^ *%[A-Za-z0-9_.]+ = input\(' "$tmp/1")
nc=$(grep -c -E '^ *%[A-Za-z0-9_.]+ = const\(' "$tmp/1")
untyped=$(grep -E '^ *%[A-Za-z0-9_.]+ = ' "$tmp/1" | grep -c -v ') : (')
fig="$n nodes ($ni input, $nc const), $untyped without a type"
if [ $rc = 0 ] && [ "$n" = 7 ] && [ "$ni" = 1 ] && [ "$nc" = 2 ] && [ "$untyped" = 0 ]; then
	result 1 PASS "$fig"
else
	result 1 FAIL "$fig (want 7 nodes: 1 input, 2 const, all typed)"
fi

# ---- 2. fusion ---------------------------------------------------------------
scenario 2 "fusion: matmul + bias + relu + sum into one kernel"
m=$(missing fuse)
if [ -n "$m" ]; then
	echo "(skipped: $m)"
	result 2 FAIL "not built yet: $m"
else
	run "$tmp/2" aicm-opt --pass=shape-infer,fuse --report testdata/demo/mlp.aicm
	rc=$?
	k=$(field "$tmp/2" '^ *kernel[0-9]+ \[' | sed 's/^ *//')
	c=$(field "$tmp/2" 'compute nodes? -> [0-9]+ kernels?' | sed 's/^ *//')
	if [ $rc = 0 ] && [ "$k" = "kernel0 [matmul_epilogue] %mm -> %bias_add -> %relu -> %rowsum" ] &&
	    [ "$c" = "4 compute nodes -> 1 kernel" ]; then
		result 2 PASS "$k; $c"
	else
		result 2 FAIL "'${k:-no kernel line}'; '${c:-no count}' (want kernel0 [matmul_epilogue] %mm -> %bias_add -> %relu -> %rowsum; 4 compute nodes -> 1 kernel)"
	fi
fi

# ---- 3. autotune -------------------------------------------------------------
scenario 3 "autotune: a 256x256x256 matmul, 576 candidates, top 3"
m=$(missing fuse autotune)
if [ -n "$m" ]; then
	echo "(skipped: $m)"
	result 3 FAIL "not built yet: $m"
else
	run "$tmp/3" aicm-opt --pass=shape-infer,fuse,autotune --report testdata/demo/gemm256.aicm
	rc=$?
	cand=$(field "$tmp/3" '^ *[0-9]+ candidates' | sed -E 's/^ *([0-9]+) candidates.*/\1/')
	top=$(grep -E '^ *#[1-3] BM=' "$tmp/3" | sed -E 's/^ *(#[1-3] BM= *[0-9]+ BN= *[0-9]+ BK= *[0-9]+ warps=[0-9]+ stages=[0-9]+).*/\1/;s/= +/=/g')
	ntop=$(printf '%s\n' "$top" | grep -c -E '^#[1-3] BM=128 BN=128 ')
	first=$(printf '%s\n' "$top" | head -1)
	fig="$cand candidates; $(printf '%s' "$top" | tr '\n' ';' | sed 's/;/; /g')"
	if [ $rc = 0 ] && [ "$cand" = 576 ] && [ "$ntop" = 3 ] && grep -q 'kernel @kernel0 \[matmul\] BM=128 BN=128 ' "$tmp/3"; then
		result 3 PASS "$fig"
	else
		result 3 FAIL "$fig (want 576 candidates, the top 3 and the pick BM=128 BN=128)"
	fi
fi

# bytes FILE read|written|total: an exact figure of the "bytes:" line
# that aicm-run --stats prints under its table.
bytes() {
	sed -n -E "s/^bytes: ([0-9]+) read, ([0-9]+) written, ([0-9]+) total.*/\1 \2 \3/p" "$1" |
		awk -v k="$2" 'NR == 1 { print (k == "read" ? $1 : k == "written" ? $2 : $3) }'
}

# kb N: N bytes as the KernelStats table prints them (1 KB = 1000 B).
kb() {
	awk -v n="$1" 'BEGIN { printf "%.1f KB", n / 1000 }'
}

# checked FILE: the --check verdicts of FILE ("PASS rel err 0" per output),
# or nothing when there is none.
checked() {
	sed -n -E 's/^check (%[^:]+): .*rel err ([^ ]+) \(tolerance ([^)]+)\): (PASS|FAIL)$/\4 \1 rel err \2 (tolerance \3)/p' "$1"
}

# errs VERDICTS: "rel err E" per output, comma-separated, for the summary.
errs() {
	printf '%s\n' "$1" | sed -n -E 's/^(PASS|FAIL) (%[^ ]+) rel err ([^ ]+) .*/\2 error \3 (\1)/p' |
		paste -s -d, - | sed 's/,/, /g'
}

# all_pass VERDICTS: true when there is at least one verdict and all pass.
all_pass() {
	[ -n "$1" ] && ! printf '%s\n' "$1" | grep -q -v '^PASS '
}

# ---- 4. tile semantics -----------------------------------------------------
scenario 4 "Triton-like tiles: a 100x60 @ 60x84 matmul in 32x32x32 tiles"
m=$(missing lower-tiled --stats)
if [ -n "$m" ]; then
	echo "(skipped: $m)"
	result 4 FAIL "not built yet: $m"
else
	run "$tmp/4" aicm-run --pass='shape-infer,lower-tiled{bm=32,bn=32,bk=32}' --stats --check testdata/demo/gemm100.aicm
	rc=$?
	row=$(field "$tmp/4" '^total ')
	grid=$(field "$tmp/4" '^eager0 \[matmul\]' | sed -E 's/.*(\([0-9, ]+\)) +([0-9]+) .*/\1 = \2 programs/')
	rd=$(bytes "$tmp/4" read)
	wr=$(bytes "$tmp/4" written)
	v=$(checked "$tmp/4")
	fig="grid $grid; ${rd:-?} B = $(kb "${rd:-0}") loaded, ${wr:-?} B = $(kb "${wr:-0}") stored; against the reference: $(errs "$v")"
	if [ $rc = 0 ] && [ "$grid" = "(4, 3) = 12 programs" ] && [ "$rd" = 305280 ] && [ "$wr" = 67200 ] &&
	    all_pass "$v" && printf '%s\n' "$row" | grep -q ' 305\.3 KB  *67\.2 KB '; then
		result 4 PASS "$fig"
	else
		result 4 FAIL "$fig (want grid (4, 3) = 12 programs, 305.3 KB loaded, 67.2 KB stored, check PASS)"
	fi
fi

# ---- 5. fused against eager traffic ------------------------------------------
scenario 5 "traffic: relu(x).sum(axis=1), x 128x96, eager against fused"
m=$(missing fuse lower-tiled --stats)
if [ -n "$m" ]; then
	echo "(skipped: $m)"
	result 5 FAIL "not built yet: $m"
else
	run "$tmp/5e" aicm-run --pass=shape-infer,lower-tiled --stats --check testdata/demo/relu-sum.aicm
	rc1=$?
	echo
	run "$tmp/5f" aicm-run --pass=shape-infer,fuse,lower-tiled --stats --check testdata/demo/relu-sum.aicm
	rc2=$?
	e=$(bytes "$tmp/5e" total)
	f=$(bytes "$tmp/5f" total)
	less=$(awk -v e="${e:-0}" -v f="${f:-0}" 'BEGIN { if (e > 0) printf "%.1f%%", 100 * (1 - f / e); else print "?" }')
	v=$(checked "$tmp/5e")
	w=$(checked "$tmp/5f")
	# the printed outputs (everything above the KernelStats table) must be equal
	sed '/^KernelStats/,$d' "$tmp/5e" >"$tmp/5e.out"
	sed '/^KernelStats/,$d' "$tmp/5f" >"$tmp/5f.out"
	if [ -s "$tmp/5e.out" ] && cmp -s "$tmp/5e.out" "$tmp/5f.out"; then same="same result"; else same="results differ"; fi
	fig="eager ${e:-?} B = $(kb "${e:-0}"), fused ${f:-?} B = $(kb "${f:-0}"), $less less; $same; against the reference: eager $(errs "$v"), fused $(errs "$w")"
	if [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$e" = 295936 ] && [ "$f" = 99328 ] && [ "$less" = 66.4% ] &&
	    [ "$same" = "same result" ] && all_pass "$v" && all_pass "$w"; then
		result 5 PASS "$fig"
	else
		result 5 FAIL "$fig (want eager 295.9 KB, fused 99.3 KB, 66.4% less, same result)"
	fi
fi

# ---- 6. the whole chain --------------------------------------------------------
scenario 6 "the whole chain on scenario 1's graph: shape-infer, fuse, autotune, lower-tiled, run"
m=$(missing fuse autotune lower-tiled --stats)
if [ -n "$m" ]; then
	echo "(skipped: $m)"
	result 6 FAIL "not built yet: $m"
else
	run "$tmp/6a" aicm-opt --pass=shape-infer,fuse,autotune testdata/demo/mlp.aicm
	rc1=$?
	echo
	run "$tmp/6b" aicm-run --pass=shape-infer,fuse,autotune,lower-tiled --stats --check testdata/demo/mlp.aicm
	rc2=$?
	pick=$(field "$tmp/6a" '^ *kernel @kernel0 ' | sed -E 's/^ *kernel @kernel0 \[[a-z_]+\] (.*) \{$/\1/')
	progs=$(field "$tmp/6b" '^total ' | awk '{ print $3 }')
	rd=$(bytes "$tmp/6b" read)
	wr=$(bytes "$tmp/6b" written)
	v=$(checked "$tmp/6b")
	fig="autotune picks ${pick:-nothing}; ${progs:-?} program; ${rd:-?} B loaded, ${wr:-?} B stored; against the reference: $(errs "$v")"
	if [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$pick" = "BM=64 BN=32 BK=16 warps=4 stages=3" ] &&
	    [ "$progs" = 1 ] && [ "$rd" = 37120 ] && [ "$wr" = 512 ] && all_pass "$v"; then
		result 6 PASS "$fig"
	else
		result 6 FAIL "$fig (want BM=64 BN=32 BK=16 warps=4 stages=3, 1 program, 37120 B loaded, 512 B stored, check PASS)"
	fi
fi

echo
echo "== Summary =="
printf '%s' "$results"
[ $fails = 0 ]
