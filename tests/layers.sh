#!/bin/sh
# layers.sh: fail when a lower layer includes a higher one.
#
#   sh tests/layers.sh
#
# The layers are DESIGN section 12's "Layers for v2", written down as the
# table below, one folder a line with its rank: src/ir at the ground (0);
# grammar/, passes/, src/runtime/, src/codegen/ and src/import/ side by side
# above it (1), each free to include only src/ir and its own folder;
# src/api/ and src/report/ (2) and src/tools/ (3) on top, free to include
# anything below.
# A file may include a header of its own folder or of a lower rank, never
# one of its rank's other folders or of a higher rank; so a pass or the
# code generator never reaches the runtime.  Folders that do not exist yet
# are in the table, so that the rule is already there when they arrive.
#
# '#include "x.h"' is resolved as the compiler does: the including file's
# folder first, then the Makefile's -I list (src/ir, src/runtime, grammar,
# build/grammar).  parser.h and lexer.h are generated into build/grammar
# and belong to grammar/.  A name found nowhere is skipped: the compiler
# will say so.  <...> includes are system headers.  tests/ and bench/ are
# outside the check: a test may reach into any layer.
# One more rule keeps the pass manager below the passes: no file of src/ir
# names a concrete pass (a 'pass_<name>' that a passes/*.c defines); the
# registry, passes/registry.c, is handed to it.
# Prints 'layers: FILE includes "X" (FOLDER): ...' for each offence and
# exits 1 if there was one; POSIX sh, grep and sed only.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

table='src/ir 0
grammar 1
passes 1
src/runtime 1
src/codegen 1
src/import 1
src/api 2
src/report 2
src/tools 3'
incpath='src/ir src/runtime src/import src/codegen src/api src/report grammar'

# rank FOLDER: its rank in the table, or nothing if it has none.
rank() {
	printf '%s\n' "$table" | sed -n "s|^$1 \\([0-9]*\\)\$|\\1|p"
}

# owner NAME DIR: the folder in the table that holds header NAME as
# included from a file in DIR, or nothing.
owner() {
	case $1 in
	parser.h|lexer.h) echo grammar; return ;;
	esac
	if [ -f "$2/$1" ]; then
		(cd "$2/$(dirname "$1")" && pwd) | sed "s|^$top/||"
		return
	fi
	for d in $incpath; do
		if [ -f "$d/$1" ]; then
			(cd "$d/$(dirname "$1")" && pwd) | sed "s|^$top/||"
			return
		fi
	done
}

bad=0
files=$(for f in $(printf '%s\n' "$table" | sed 's/ .*//'); do
	[ -d "$f" ] && find "$f" -type f \( -name '*.[chly]' -o -name '*.def' \)
done | sort)
for f in $files; do
	dir=$(dirname "$f")
	# The folder of the table that holds f (a subfolder counts as its parent).
	me=
	for t in $(printf '%s\n' "$table" | sed 's/ .*//'); do
		case $dir/ in "$t"/*) me=$t ;; esac
	done
	myrank=$(rank "$me")
	for inc in $(sed -n 's/^[ 	]*#[ 	]*include[ 	]*"\([^"]*\)".*/\1/p' "$f"); do
		o=$(owner "$inc" "$dir")
		[ -n "$o" ] || continue
		them=
		for t in $(printf '%s\n' "$table" | sed 's/ .*//'); do
			case $o/ in "$t"/*) them=$t ;; esac
		done
		[ -n "$them" ] || continue
		[ "$them" = "$me" ] && continue
		r=$(rank "$them")
		if [ "$r" -ge "$myrank" ]; then
			case $me:$them in
			passes:src/runtime|src/codegen:src/runtime)
				echo "layers: $f includes \"$inc\" (src/runtime/): a pass or the code generator never includes the runtime" >&2
				bad=1; continue ;;
			esac
			echo "layers: $f includes \"$inc\" ($them/): $me/ (layer $myrank) may include only its own folder and lower layers, and $them/ is layer $r" >&2
			bad=1
		fi
	done
done
# The pass manager names no pass: each passes/<name>.c exports one
# 'const Pass pass_<name>', and only the registry above the passes
# (passes/registry.c) lists them; src/ir takes the list as an argument.
for p in $(sed -n 's/^const Pass \(pass_[a-z0-9_]*\) =.*/\1/p' passes/*.c); do
	for f in $(grep -lw "$p" $(find src/ir -type f \( -name '*.[ch]' -o -name '*.def' \))); do
		echo "layers: $f names the pass '$p': src/ir takes the registry (passes/registry.c) as an argument" >&2
		bad=1
	done
done
if [ $bad -ne 0 ]; then
	echo "layers: a lower layer includes or names a higher one (see the table in tests/layers.sh, DESIGN section 12)" >&2
	exit 1
fi
echo "layers: ok ($(printf '%s\n' "$files" | grep -c .) files)"
