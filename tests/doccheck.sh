#!/bin/sh
# doccheck.sh: run the commands shown in the docs and diff what they print.
#
#   sh tests/doccheck.sh [--update] BUILD_DIR DOC.md...
#
# A doc shows a session as a fenced block whose info string is 'console':
# each line '$ cmd' is a command (a line ending in '\' continues it) and
# the lines after it, up to the next '$ ' or the closing fence, are what it
# prints, stdout and stderr together.  A block whose info string is
# 'aicm file=NAME' (or any language, then file=NAME) is written to NAME
# first, so a tutorial can have the reader write a file and then use it.
# Commands run through sh, in order, in one scratch folder per doc that
# holds a link to the repository's testdata/ (so paths read as they do
# from the top of a checkout) and to BUILD_DIR/models/ (the models that
# tests/models.sh exports, when it has), with BUILD_DIR first on PATH.  A command's
# exit status is not checked: an error message is output like any other;
# each command gets 300 s.
# --update rewrites the outputs in the docs from what the tools print now
# (review 'git diff docs/' like code).  The same idea as golden.sh, for
# prose: the docs cannot drift from the tools.
update=0
if [ "$1" = --update ]; then update=1; shift; fi
if [ $# -lt 2 ]; then
	echo "usage: sh tests/doccheck.sh [--update] BUILD_DIR DOC.md..." >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
bin=$(cd "$1" 2>/dev/null && pwd) || { echo "doccheck: no build folder '$1'" >&2; exit 2; }
shift
PATH="$bin:$PATH"
export PATH
# docs/python.md's scripts import the package from the checkout, over this build's library
PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}"
AICM_LIB="$bin/libaicm.so"
export PYTHONPATH AICM_LIB
# The docs print numpy's error against aicm, and numpy's last bits depend on
# the OpenBLAS kernel it loads for the CPU (and on OPENBLAS_CORETYPE, which a
# machine's environment may set: Haswell here on an AMD Zen 5).  OpenBLAS's
# generic Prescott kernel (SSE2) gives the same bytes on every x86-64, so the
# docs' figures do not change with the machine they are checked on.
OPENBLAS_CORETYPE=Prescott
export OPENBLAS_CORETYPE
unset OPENBLAS_L2_SIZE
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aicm-doccheck.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT INT TERM

# A command that hangs fails the check instead of hanging it.
to=""
command -v timeout >/dev/null 2>&1 && to="timeout 300 "

pass=0
fail=0
for doc in "$@"; do
	[ -f "$doc" ] || { echo "doccheck: no file '$doc'" >&2; exit 2; }
	work="$scratch/work"
	rm -rf "$work" && mkdir -p "$work" && ln -s "$top/testdata" "$work/testdata"
	# the README's commands name the tools as build/aicm-opt, as a checkout has them
	ln -s "$bin" "$work/build"
	# the real models tests/models.sh exported (docs/import.md's example)
	[ -d "$bin/models" ] && ln -s "$bin/models" "$work/models"
	# The whole doc is rewritten with fresh outputs, then compared.
	awk -v work="$work" -v tmp="$scratch" -v to="$to" '
	function flush_cmd(   f, line) {
		if (cmd == "")
			return
		f = tmp "/cmd.sh"
		printf "cd \"%s\" || exit 99\n%s\n", work, cmd > f
		close(f)
		system(to "sh \"" f "\" >\"" tmp "/cmd.out\" 2>&1 </dev/null")
		while ((getline line < (tmp "/cmd.out")) > 0)
			print line
		close(tmp "/cmd.out")
		cmd = ""
		ncmd++
	}
	BEGIN { mode = ""; cmd = ""; cont = 0 }
	mode == "" && /^```console[ \t]*$/ { mode = "console"; print; next }
	mode == "" && /^```[A-Za-z0-9_-]* .*file=[^ ]+/ {
		mode = "file"
		fname = $0
		sub(/.*file=/, "", fname)
		sub(/[ \t].*/, "", fname)
		fpath = work "/" fname
		printf "" > fpath
		print
		next
	}
	mode == "" { print; next }
	mode == "file" && /^```[ \t]*$/ { close(fpath); mode = ""; print; next }
	mode == "file" { print > fpath; print; next }
	# console: commands, their (regenerated) outputs, the closing fence
	/^```[ \t]*$/ { if (!cont) flush_cmd(); mode = ""; print; next }
	cont { print; cmd = cmd "\n" $0; cont = /\\$/; next }
	/^\$ / {
		flush_cmd()
		print
		cmd = substr($0, 3)
		cont = /\\$/
		next
	}
	{ next }    # an old output line: dropped, the fresh one replaces it
	END { printf "%d\n", ncmd > (tmp "/ncmd") }
	' "$doc" >"$scratch/new.md"
	n=$(cat "$scratch/ncmd")
	if [ $update = 1 ]; then
		cmp -s "$doc" "$scratch/new.md" || cp "$scratch/new.md" "$doc"
	fi
	if diff -u "$doc" "$scratch/new.md" >"$scratch/diff"; then
		pass=$((pass + 1))
		[ -n "$VERBOSE" ] && echo "[PASS] $doc ($n commands)"
	else
		fail=$((fail + 1))
		echo "[FAIL] $doc: the shown output differs from what the commands print now"
		sed 's/^/    /' "$scratch/diff" | head -80
	fi
done
echo "doccheck: $pass passed, $fail failed"
[ $fail -eq 0 ]
