#!/bin/sh
# opnames.sh: every op of the op tables is in the docs and the editor files.
#
#   sh tests/opnames.sh
#
# Adding an op is a row in src/ir/ops.def (and a tile op a row in the tile
# op table) plus its formula: nothing else in the code names it.  What a
# user reads is not generated from the table, so this check keeps it in
# step: each graph op's spelling must appear in docs/ir.md's op tables (in
# backquotes), in the vim syntax's aicmOp keywords and in the VS Code
# grammar's op pattern; each tile op's in the two editor files.  Rows
# whose class is OC_TILED are the tiled-node stand-in, never written as an
# op.  Prints one line per gap and exits 1 if there was one.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
vim=docs/editors/vim/syntax/aicm.vim
code=docs/editors/vscode/syntaxes/aicm.tmLanguage.json
bad=0

ops=$(sed -n 's/^OP([A-Z_0-9]*, *"\([a-z_0-9]*\)", *\(OC_[A-Z]*\).*/\1 \2/p' src/ir/ops.def |
    awk '$2 != "OC_TILED" { print $1 }')
[ -n "$ops" ] || { echo "opnames: no ops read from src/ir/ops.def" >&2; exit 2; }
tops=""
[ -f src/ir/tile_ops.def ] &&
    tops=$(sed -n 's/^TOP([A-Z_0-9]*, *"\([a-z_0-9]*\)".*/\1/p' src/ir/tile_ops.def)

vimops=" $(sed -n 's/^syn keyword aicm\(Op\|Keyword\) *//p' "$vim" | tr '\n' ' ') "
codeops="|$(sed -n 's/.*"match": "\\\\b(\([a-z_|0-9]*\)).*/\1/p' "$code" | tr '\n' '|')|"
docops=$(sed -n 's/^| *\(`[^|]*\)|.*/\1/p' docs/ir.md | tr -d '`,' | tr ' ' '\n')

for op in $ops; do
	case $vimops in *" $op "*) ;; *) echo "opnames: '$op' (src/ir/ops.def) is missing from $vim"; bad=1 ;; esac
	case $codeops in *"|$op|"*) ;; *) echo "opnames: '$op' (src/ir/ops.def) is missing from $code"; bad=1 ;; esac
	printf '%s\n' "$docops" | grep -qx "$op" ||
	    { echo "opnames: '$op' (src/ir/ops.def) is missing from docs/ir.md's op tables"; bad=1; }
done
for op in $tops; do
	case $op in unary|binary|reduce) continue ;; esac
	case $vimops in *" $op "*) ;; *) echo "opnames: tile op '$op' (src/ir/tile_ops.def) is missing from $vim"; bad=1 ;; esac
done
exit $bad
