#!/bin/sh
# dotrender.sh: every picture aicm-opt --emit=dot draws renders with Graphviz.
#
#   sh tests/dotrender.sh BUILD_DIR
#
# The goldens hold the dot text; only Graphviz can say that the text is a
# picture (a quote or a record label that dot refuses is still text).  So
# each case below, unfused, fused and lowered to tiled kernels, goes through
# 'dot -Tsvg', which must exit 0 and write a whole SVG.  Without Graphviz
# ('dot' not on PATH) the check says SKIPPED and passes: it is optional, as
# FileCheck is not.
if [ $# -ne 1 ]; then
	echo "usage: sh tests/dotrender.sh BUILD_DIR" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
opt="$1/aicm-opt"
[ -x "$opt" ] || { echo "dotrender: no '$opt'" >&2; exit 2; }
if ! command -v dot >/dev/null 2>&1; then
	echo "dotrender: SKIPPED: Graphviz 'dot' is not installed"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aicm-dot.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
fail=0
for c in testdata/tiled/dot-clusters.aicm testdata/fuse/seed-mlp.aicm testdata/fuse/attention.aicm \
    testdata/tiled/attention.aicm \
    testdata/demo/mlp.aicm; do
	for p in shape-infer shape-infer,fuse shape-infer,fuse,lower-tiled \
	    'shape-infer,fuse{row-fusion=true},autotune,lower-tiled'; do
		n=$((n + 1))
		if ! "$opt" --pass="$p" --emit=dot "$c" >"$tmp/g.dot" 2>"$tmp/err"; then
			echo "[FAIL] aicm-opt --pass='$p' --emit=dot $c: exit $?"
			cat "$tmp/err"
			fail=$((fail + 1))
		elif ! dot -Tsvg "$tmp/g.dot" >"$tmp/g.svg" 2>"$tmp/err" || ! grep -q '</svg>' "$tmp/g.svg"; then
			echo "[FAIL] dot -Tsvg refuses aicm-opt --pass='$p' --emit=dot $c:"
			cat "$tmp/err"
			fail=$((fail + 1))
		fi
	done
done
echo "dotrender: $n pictures, $fail that Graphviz refused"
[ $fail -eq 0 ]
