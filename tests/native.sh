#!/bin/sh
# native.sh: the native engine's cache and its errors (docs/codegen.md).
#
#   sh tests/native.sh BUILD
#
# With a cache folder of its own (XDG_CACHE_HOME under a temporary
# folder): a first run compiles (--verbose says "cache miss"), a second
# loads the cached .so ("cache hit"); a truncated .so, a .so with bytes
# changed in place and a garbage .sum are each detected and compiled
# again, never loaded, and the result still passes --check; two runs of
# the same graph compiling at once into an empty cache both pass (through
# a compiler that waits a second first, so that the second starts while
# the first compiles); CC naming no compiler gives one clear error and
# exit 2; kernels with atomics give the same bits on 2 threads as on 1,
# split by grid rows where NAME_aicm_rows allows it; the dot's in-place
# paths (tests/native/dots.aicm) against the reference.  A few seconds.
set -u
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
XDG_CACHE_HOME=$T/cache
export XDG_CACHE_HOME
g=$top/tests/aot/model.aicm
fail=0

run() {   # run WANT: a --check run whose --verbose line must say WANT
	out=$("$B/aicm-run" --engine=native --verbose --check -q "$g" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q "native: $1" ||
	    printf '%s\n' "$out" | grep -q FAIL; then
		echo "native: expected '$1' and PASS, got (exit $rc):"
		printf '%s\n' "$out" | sed 's/^/    /'
		fail=1
	fi
}

run "cache miss"
run "cache hit"
so=$(ls "$T"/cache/aicm/*.so)
head -c 1000 "$so" >"$T/cut" && cat "$T/cut" >"$so"
run "cache miss"              # truncated: its bytes no longer hash to .sum
printf 'XXXX' | dd of="$so" bs=1 seek=4096 conv=notrunc 2>/dev/null
run "cache miss"              # same size, bytes changed
run "cache hit"
echo garbage >"${so%.so}.sum"
run "cache miss"              # the .sum itself damaged
# Two at once: the first's clean-up must not take the file that the
# second's compiler is about to read (they share the cache key).
printf '#!/bin/sh\ncase " $* " in *" -o "*) sleep 1 ;; esac\nexec %s "$@"\n' "${CC:-cc}" >"$T/slowcc"
chmod +x "$T/slowcc"
rm -rf "$T/cache"
CC=$T/slowcc "$B/aicm-run" --engine=native --check -q "$g" >"$T/one" 2>&1 &
one=$!
sleep 0.5
CC=$T/slowcc "$B/aicm-run" --engine=native --check -q "$g" >"$T/two" 2>&1
rc2=$?
wait $one
rc1=$?
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ] || grep -q FAIL "$T/one" "$T/two"; then
	echo "native: two runs compiling at once: exits $rc1 and $rc2:"
	sed 's/^/    /' "$T/one" "$T/two"
	fail=1
fi
out=$(CC=/nonexistent/cc "$B/aicm-run" --engine=native "$g" 2>&1)
rc=$?
if [ $rc -ne 2 ] || ! printf '%s\n' "$out" | grep -q "needs a C compiler"; then
	echo "native: no compiler: expected exit 2 and 'needs a C compiler', got exit $rc:"
	printf '%s\n' "$out" | sed 's/^/    /'
	fail=1
fi
# Threads on kernels with atomics: rows-*.aicm's may be split by grid rows
# (NAME_aicm_rows), cols-f32.aicm's may not; either way 2 threads give the
# bits of 1, and both pass --check against the reference.
P='shape-infer,fuse{row-fusion=true},autotune{target=cpu},lower-tiled'
for w in rows-f32 rows-f64 cols-f32; do
	for t in 1 2; do
		mkdir -p "$T/$w-$t"
		if ! "$B/aicm-run" --engine=native --pass="$P" --threads=$t --check -q --seed=3 \
		    --output-dir="$T/$w-$t" "$top/tests/native/$w.aicm" >"$T/out" 2>&1 ||
		    grep -q FAIL "$T/out"; then
			echo "native: $w.aicm on $t threads:"
			sed 's/^/    /' "$T/out"
			fail=1
		fi
	done
	if ! cmp -s "$T/$w-1/y.npy" "$T/$w-2/y.npy"; then
		echo "native: $w.aicm: 2 threads did not give 1 thread's bits"
		fail=1
	fi
done
# The dot's in-place paths (cg_plan_dots): dots.aicm's b strips packed
# from the tensor (one through a transposed view; attn.aicm's through a
# transpose folded into the packing), the dot adding into
# the loop's carried tile (f32, f64; i32 in place only), against the
# reference; the C must use those paths,
# else the graph no longer tests them (autotune's tiles changed: reshape).
out=$("$B/aicm-run" --engine=native --pass="$P" --check -q --seed=5 "$top/tests/native/dots.aicm" 2>&1)
if [ $? -ne 0 ] || [ "$(printf '%s\n' "$out" | grep -c PASS)" -ne 4 ] ||
    printf '%s\n' "$out" | grep -q FAIL; then
	echo "native: dots.aicm:"
	printf '%s\n' "$out" | sed 's/^/    /'
	fail=1
fi
out=$("$B/aicm-run" --engine=native --pass="$P" --check -q --seed=6 "$top/tests/native/attn.aicm" 2>&1)
if [ $? -ne 0 ] || [ "$(printf '%s\n' "$out" | grep -c PASS)" -ne 2 ] ||
    printf '%s\n' "$out" | grep -q FAIL; then
	echo "native: attn.aicm:"
	printf '%s\n' "$out" | sed 's/^/    /'
	fail=1
fi
n3=$("$B/aicm-opt" --pass="$P" --emit=c "$top/tests/native/attn.aicm" | grep -c 'read by its dot through')
if [ "$n3" -ne 2 ]; then
	echo "native: attn.aicm: expected 2 transposes folded into their dots, got $n3"
	fail=1
fi
c=$("$B/aicm-opt" --pass="$P" --emit=c "$top/tests/native/dots.aicm")
n1=$(printf '%s\n' "$c" | grep -c '/\* %b: read in place \*/')
n2=$(printf '%s\n' "$c" | grep -c '/\* %d: the loop.s carried tile')
if [ "$n1" -ne 3 ] || [ "$n2" -ne 4 ]; then
	echo "native: dots.aicm: expected 3 dots reading b in place and 4 accumulating in place, got $n1 and $n2"
	fail=1
fi
# the descriptor: a row's program count (> 0, autotune's pick) or 0
got=$(for w in rows-f32 rows-f64 cols-f32; do
	"$B/aicm-opt" --pass="$P" --emit=c "$top/tests/native/$w.aicm" |
	    sed -n "s/^const long [a-z]*_aicm_rows\\[\\] = {\\([0-9]*\\)};/$w \\1/p"; done | tr '\n' ' ')
case "$got" in
"rows-f32 "[1-9]*" rows-f64 "[1-9]*" cols-f32 0 ") ;;
*)
	echo "native: NAME_aicm_rows: expected rows-* > 0 and cols-f32 0, got '$got'"
	fail=1 ;;
esac
[ $fail -eq 0 ] && echo "native: cache and compiler checks passed"
exit $fail
