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
	echo "\$ $*"
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

# stats FILE KEY: a figure of aicm-run --stats' total.
# (filled in below once the format is fixed)

echo
echo "== Summary =="
printf '%s' "$results"
[ $fails = 0 ]
