#!/bin/sh
# mancheck.sh: every option that a tool's --help lists is in its man page.
#
#   sh tests/mancheck.sh BUILD_DIR
#
# The options are the words starting with '-' at the head of each option
# line of --help ("  --pass=PIPELINE ...", "  -o FILE ..."); the man page
# docs/TOOL.1 must mention each (troff's '\-' read as '-').  It keeps the
# man pages from falling behind the tools.
if [ $# -ne 1 ]; then
	echo "usage: sh tests/mancheck.sh BUILD_DIR" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
fail=0
n=0
for t in aicm-opt aicm-run aicm-import; do
	[ -x "$1/$t" ] || { echo "mancheck: no '$1/$t'" >&2; exit 2; }
	man="docs/$t.1"
	opts=$("$1/$t" --help | sed -n -E 's/^  (-[-a-z]+).*/\1/p' | sort -u)
	for o in $opts; do
		n=$((n + 1))
		if ! sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man" | grep -q -e "$o\\([^-a-z]\\|\$\\)"; then
			echo "[FAIL] $man does not mention $o (listed by '$t --help')"
			fail=$((fail + 1))
		fi
	done
done
echo "mancheck: $n options, $fail missing from the man pages"
[ $fail -eq 0 ]
