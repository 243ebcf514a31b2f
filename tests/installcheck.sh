#!/bin/sh
# installcheck.sh: make install puts every file where the man pages say, and
# the man pages' EXAMPLES run from there.
#
#   sh tests/installcheck.sh BUILD_DIR
#
# Two installs into scratch folders: one with PREFIX alone (the paths the
# man pages name are then real, so their EXAMPLES run exactly as a reader
# would type them, with the installed tools first on PATH), one with
# DESTDIR and another PREFIX (a packager's staging: files under DESTDIR,
# the man pages naming PREFIX).  Each EXAMPLES command, its '\' lines
# joined, runs through sh in one scratch folder per page, in order; it
# fails on an exit status other than 0 (diff's 1, "the files differ", is
# what its example shows) or an 'error:' on its output.  A command that needs
# what this machine lacks (Graphviz's dot, a file of a Debian package
# outside the prefix) is reported SKIPPED by name.  Then libaicm's example
# is built against each install with pkg-config and run (below), and make
# uninstall must leave no file of ours behind.
if [ $# -ne 1 ]; then
	echo "usage: sh tests/installcheck.sh BUILD_DIR" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
[ -x "$1/aicm-opt" ] || { echo "installcheck: no '$1/aicm-opt'" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aicm-install.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
make=${MAKE:-make}
fail=0
bad() {
	echo "[FAIL] $*"
	fail=$((fail + 1))
}

p="$tmp/prefix"
$make -s install B="$1" PREFIX="$p" >"$tmp/log" 2>&1 || { cat "$tmp/log"; bad "make install PREFIX=$p"; }
files="bin/aicm-opt bin/aicm-run bin/aicm-import
share/man/man1/aicm-opt.1 share/man/man1/aicm-run.1 share/man/man1/aicm-import.1
share/aicm/examples/mlp.aicm share/aicm/examples/relu-sum.aicm share/aicm/examples/gemm256.aicm
share/aicm/examples/mlp.onnx share/aicm/examples/mlp.in.npy share/aicm/examples/mlp.out.npy
share/doc/aicm/README.md share/doc/aicm/tutorial.md share/doc/aicm/ir.md share/doc/aicm/passes.md
share/doc/aicm/exercises.md share/doc/aicm/img/fuse-attention.svg
share/aicm/editors/README.md share/aicm/editors/vim/syntax/aicm.vim
share/aicm/editors/vim/ftdetect/aicm.vim share/aicm/editors/vscode/package.json
share/aicm/editors/vscode/syntaxes/aicm.tmLanguage.json
lib/libaicm.a lib/libaicm.so.0 include/aicm.h lib/pkgconfig/aicm.pc share/aicm/examples/api_demo.c
lib/python3/dist-packages/aicm/__init__.py lib/python3/dist-packages/aicm/_lib.py"
n=0
for f in $files; do
	n=$((n + 1))
	[ -f "$p/$f" ] || bad "make install did not install $f"
done
for t in aicm-opt aicm-run aicm-import; do
	[ -x "$p/bin/$t" ] || bad "$p/bin/$t is not executable"
	m="$p/share/man/man1/$t.1"
	[ -f "$m" ] || continue
	grep -q "/usr/local/share" "$m" && bad "installed $t.1 still names /usr/local/share"
	grep -q "$p/share/aicm/examples" "$m" || bad "installed $t.1 does not name $p/share/aicm/examples"
done

# The man pages' examples, from the installed pages, with the installed tools.
ran=0
for t in aicm-opt aicm-run aicm-import; do
	m="$p/share/man/man1/$t.1"
	[ -f "$m" ] || continue
	work="$tmp/run-$t"
	mkdir -p "$work"
	sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$m" | awk '
		/^\.nf/ { on = 1; next }
		/^\.fi/ { on = 0; next }
		on {
			gsub(/\\-/, "-"); gsub(/\\e/, "\\")
			if (sub(/\\$/, "")) { cmd = cmd $0; next }
			if ($0 ~ /\|[ \t]*$/) { cmd = cmd $0 " "; next }   # a pipe goes on
			print cmd $0; cmd = ""
		}' >"$tmp/cmds"
	[ -s "$tmp/cmds" ] || bad "$t.1 has no EXAMPLES commands"
	while IFS= read -r c; do
		need=""
		case "$c" in *"| dot "*) command -v dot >/dev/null 2>&1 || need="Graphviz's dot";; esac
		for w in $c; do
			case "$w" in
			/usr/share/*) [ -e "$w" ] || need="$w";;
			esac
		done
		if [ -n "$need" ]; then
			echo "installcheck: SKIPPED ($t.1 example needs $need): $c"
			continue
		fi
		ran=$((ran + 1))
		(cd "$work" && PATH="$p/bin:$PATH" && export PATH && sh -c "$c") >"$tmp/out" 2>&1 </dev/null
		rc=$?
		ok=0
		case "$c" in
		diff\ *) [ $rc -le 1 ] && ok=1;;   # diff's 1: the stages differ, as shown
		*) [ $rc -eq 0 ] && ok=1;;
		esac
		if [ $ok = 0 ] || grep -q 'error:' "$tmp/out"; then
			bad "$t.1 example (exit $rc): $c"
			sed 's/^/    /' "$tmp/out" | head -20
		fi
	done <"$tmp/cmds"
done

# libaicm (DESIGN section 14): the soname, the installed example built with
# pkg-config against the installed .pc and run with the shared library,
# again linked with the static one, its output that of the build tree's
# (examples/api_demo.out); the Python package found where it was put and
# finding its library beside itself (no AICM_LIB).  The sanitizer build's
# libraries need the sanitizer at link time, and cannot be loaded into
# python.
san=
case "$1" in *-san) san="-fsanitize=address,undefined";; esac
[ -L "$p/lib/libaicm.so" ] || bad "make install did not link lib/libaicm.so"
if command -v readelf >/dev/null 2>&1; then
	readelf -d "$p/lib/libaicm.so.0" | grep -q 'SONAME.*\[libaicm\.so\.0\]' ||
		bad "lib/libaicm.so.0 has no soname libaicm.so.0"
fi
demo() {   # demo NAME ROOT CC-ARGS...: build ROOT's example, run it, compare
	name=$1
	root=$2
	shift 2
	# shellcheck disable=SC2086
	if ! cc -std=c11 $san -o "$tmp/$name" "$root/share/aicm/examples/api_demo.c" "$@" >"$tmp/out" 2>&1; then
		bad "api_demo ($name) does not build: cc $*"
		sed 's/^/    /' "$tmp/out" | head -20
		return
	fi
	if ! "$tmp/$name" "$root/share/aicm/examples/mlp.aicm" >"$tmp/out" 2>&1 ||
	    ! diff -u examples/api_demo.out "$tmp/out" >"$tmp/diff"; then
		bad "api_demo ($name) does not print examples/api_demo.out"
		head -20 "$tmp/diff" "$tmp/out" | sed 's/^/    /'
	fi
}
pc=$(PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config --cflags --libs aicm) ||
	bad "pkg-config cannot read the installed aicm.pc"
[ "$(PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config --modversion aicm)" = \
	"$(sed -n 's/^#define AICM_VERSION_[A-Z]* \([0-9]*\)$/\1/p' src/api/aicm.h | paste -sd.)" ] ||
	bad "aicm.pc's version is not aicm.h's"
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$p/lib" demo api_demo "$p" $pc
demo api_demo_static "$p" -I"$p/include" "$p/lib/libaicm.a" -lm -lpthread
if [ -z "$san" ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	env -u AICM_LIB PYTHONPATH="$p/lib/python3/dist-packages" /usr/bin/python3 -c '
import sys, numpy as np, aicm
assert aicm.__file__.startswith(sys.argv[1]), aicm.__file__
x = np.ones((64, 48))
y = aicm.run(open(sys.argv[2]).read(), x=x, W=np.ones((48, 32)), bias=np.ones(32))["rowsum"]
assert (y == 49 * 32).all(), y
' "$p/lib/python3" "$p/share/aicm/examples/mlp.aicm" >"$tmp/out" 2>&1 ||
		{ bad "the installed aicm package does not run"; sed 's/^/    /' "$tmp/out"; }
fi

# A packager's staging folder: the files under DESTDIR, the pages naming PREFIX.
d="$tmp/stage"
$make -s install B="$1" DESTDIR="$d" PREFIX=/opt/aicm >"$tmp/log" 2>&1 || { cat "$tmp/log"; bad "make install DESTDIR=$d PREFIX=/opt/aicm"; }
[ -x "$d/opt/aicm/bin/aicm-run" ] || bad "DESTDIR install has no $d/opt/aicm/bin/aicm-run"
[ -f "$d/opt/aicm/share/aicm/examples/mlp.aicm" ] || bad "DESTDIR install has no examples"
grep -q '/opt/aicm/share/aicm/examples/mlp.aicm' "$d/opt/aicm/share/man/man1/aicm-opt.1" 2>/dev/null ||
	bad "DESTDIR install: aicm-opt.1 does not name /opt/aicm/share/aicm/examples"
# the example against the staged copy: pkg-config with the staging folder
# as its sysroot, as a packager's build would
grep -q '^prefix=/opt/aicm$' "$d/opt/aicm/lib/pkgconfig/aicm.pc" 2>/dev/null ||
	bad "DESTDIR install: aicm.pc does not say prefix=/opt/aicm"
pc=$(PKG_CONFIG_SYSROOT_DIR="$d" PKG_CONFIG_PATH="$d/opt/aicm/lib/pkgconfig" \
	pkg-config --cflags --libs aicm) || bad "pkg-config cannot read the staged aicm.pc"
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$d/opt/aicm/lib" demo api_demo_staged "$d/opt/aicm" $pc

$make -s uninstall PREFIX="$p" >"$tmp/log" 2>&1 || { cat "$tmp/log"; bad "make uninstall PREFIX=$p"; }
left=$(find "$p" -type f | sed "s|^$p/||")
[ -z "$left" ] || bad "make uninstall left: $left"

echo "installcheck: $n files, $ran man page examples run, $fail failures"
[ $fail -eq 0 ]
