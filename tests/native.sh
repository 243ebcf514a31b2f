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
# split by grid rows where NAME_aicm_rows allows it; b strips kept from
# program to program (tests/native/keep.aicm) on 1 and 2 threads; the
# dot's in-place paths (tests/native/dots.aicm, attn.aicm, whose loop
# state is joined and extracted in place) against the reference.  The streaming
# kernels' paths (docs/codegen.md) against the reference on edges that
# tiles do not divide: masked loads read in place, elementwise chains
# computed inside their reduction's or store's loop (NaN rows kept by relu
# and max; a row's partials combined as a tree), integer chains, and a
# softmax's row segment; each run also greps its C for the path, so that
# a change that stops taking it fails here rather than passing on the old
# path.  Integer division by zero in a
# valid lane fails the run as in the other engines.  The dot's
# micro-kernel built for AVX-512, AVX2 + FMA and SSE from the same C: each
# on its target's registers, AVX2's with no spills, and each that this
# machine runs against the reference.  The generated exp
# against libm over a sweep (tests/native/vexp.c), and an f64 row's
# division by its sum against a / b (tests/native/vdiv.c).  A few seconds.
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
# Kept b strips (cg_plan_dots' keep): keep.aicm's three dots keep them
# and run their programs column by column; on 1 and 2 threads (the
# second kernel's 9 programs split mid-row) they pass --check and give
# the same bits.
for t in 1 2; do
	mkdir -p "$T/keep-$t"
	if ! "$B/aicm-run" --engine=native --pass="$P" --threads=$t --check -q --seed=3 \
	    --output-dir="$T/keep-$t" "$top/tests/native/keep.aicm" >"$T/out" 2>&1 ||
	    [ "$(grep -c PASS "$T/out")" -ne 3 ]; then
		echo "native: keep.aicm on $t threads:"
		sed 's/^/    /' "$T/out"
		fail=1
	fi
done
for f in y p d; do
	if ! cmp -s "$T/keep-1/$f.npy" "$T/keep-2/$f.npy"; then
		echo "native: keep.aicm: %$f on 2 threads did not give 1 thread's bits"
		fail=1
	fi
done
n4=$("$B/aicm-opt" --pass="$P" --emit=c "$top/tests/native/keep.aicm" | grep -c 'packed once, kept')
if [ "$n4" -ne 3 ]; then
	echo "native: keep.aicm: expected 3 dots keeping their b strips, got $n4"
	fail=1
fi
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
c=$("$B/aicm-opt" --pass="$P" --emit=c "$top/tests/native/attn.aicm")
n3=$(printf '%s\n' "$c" | grep -c 'read by its dot through')
if [ "$n3" -ne 2 ]; then
	echo "native: attn.aicm: expected 2 transposes folded into their dots, got $n3"
	fail=1
fi
# and their running state: the loop's join written into its carried tile,
# the extracts (3 in the loop, 2 after it) read from it in place
n5=$(printf '%s\n' "$c" | grep -c '%stn: the loop.s carried tile')
n6=$(printf '%s\n' "$c" | grep -c '^[[:space:]]*t[0-9]* = &t[0-9]*\[[0-9]*\];   /\* read in place')
if [ "$n5" -ne 2 ] || [ "$n6" -ne 10 ]; then
	echo "native: attn.aicm: expected 2 joins in their carried tiles and 10 extracts in place, got $n5 and $n6"
	fail=1
fi
# and the dots packing through those transposes prefetch the strip they
# pack next (its rows one run: each block of 6 rows K lines of it), the
# first (k read in place) also the next step's first strip of k
n7=$(printf '%s\n' "$c" | grep -c '&t[0-9]*\[(n0 + [0-9]*) \* [0-9]* + m / 6 \* [0-9]*\]')
n8=$(printf '%s\n' "$c" | grep -c ': s[0-9]* + [0-9]* < [0-9]* ? &t[0-9]*\[[0-9]* + m / 6 \* [0-9]*\] : 0) : 0, ')
if [ "$n7" -ne 2 ] || [ "$n8" -ne 1 ]; then
	echo "native: attn.aicm: expected 2 dots prefetching their transposed next strip, 1 also the next step's, got $n7 and $n8"
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
# streaming paths: GRAPH PIPELINE PATTERN COUNT: --check passes and the
# C holds PATTERN COUNT times
stream() {
	out=$("$B/aicm-run" --engine=native --pass="$2" --random-rest --check -q "$T/$1.aicm" 2>&1)
	rc=$?
	n=$("$B/aicm-opt" --pass="$2" --emit=c "$T/$1.aicm" 2>&1 | grep -c "$3")
	if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q PASS ||
	    printf '%s\n' "$out" | grep -q FAIL || [ "$n" != "$4" ]; then
		echo "native: $1 under $2: expected PASS and $4 lines '$3' in its C, got $n (exit $rc):"
		printf '%s\n' "$out" | sed 's/^/    /'
		fail=1
	fi
}
cat >"$T/chain.aicm" <<'EOF'
graph @chain {
  %x = input() : (37, 53) f32
  %w = input() : (37, 53) f32
  %c = const() : () f32 value=0.99
  %a = add(%x, %c)
  %s = sqrt(%a)
  %r = relu(%s)
  %m = mul(%r, %w)
  %y = sum(%m) axis=1
  %z = max(%s) axis=1
}
EOF
sed 's/f32/f64/g; s/@chain/@chain64/' "$T/chain.aicm" >"$T/chain64.aicm"
cat >"$T/ints.aicm" <<'EOF'
graph @ints {
  %x = input() : (37, 53) i32
  %y = input() : (37, 53) i32
  %m = mul(%x, %y)
  %a = add(%m, %x)
  %o = relu(%a)
  %t = sum(%o) axis=1
  %u = max(%o) axis=1
}
EOF
cat >"$T/ew.aicm" <<'EOF'
graph @ew {
  %x = input() : (37, 53) i64
  %y = input() : (37, 53) i64
  %m = mul(%x, %y)
  %o = sub(%m, %x)
}
EOF
cat >"$T/soft.aicm" <<'EOF'
graph @soft {
  %x = input() : (37, 70) f32
  %m = max(%x) axis=-1 keepdims=True
  %s = sub(%x, %m)
  %e = exp(%s)
  %d = sum(%e) axis=-1 keepdims=True
  %y = div(%e, %d)
}
EOF
small='shape-infer,fuse,lower-tiled{bm=8,bn=16}'
inplace='base;   /\* read in place'
for c in chain chain64; do
	stream $c "$small" "$inplace" 5                   # all masked but the scalar
	stream $c "$small" 'computed in the next' 2       # add-sqrt into the store, relu-mul into the sum
	stream $c "$small" 'aicm_vcmax_f..(part, &t' 1  # the max's vector select, on its row in place
	# the partials combined as a tree (its last level), the sum's and the
	# max's, NaN rows among the max's; the select's vectors AVX-512's
	# 64 bytes where the target has them (this --check runs them here
	# when the machine has AVX-512)
	stream $c "$small" 'part\[0\] = aicm_c\(sum\|max\)_f..(part\[0\], part\[1\])' 2
	stream $c "$small" '^#if defined(__AVX512F__)$' 1
	# rows of 64 (4 vectors in f32, 8 in f64): two vectors of partials, the
	# second's select and the first tree level's a vector at a time; 53
	# valid lanes, so one strip of two vectors and the scalar tail
	stream $c 'shape-infer,fuse,lower-tiled{bm=8,bn=64}' 'aicm_vcmax_f..(part, part + \(16\|8\));' 1
	stream $c 'shape-infer,fuse,lower-tiled{bm=8,bn=64}' 'aicm_vcmax_f..(part + \(16\|8\), &t.* + \(16\|8\));' 1
	# and the same C built for the target without AVX (16-byte selects)
	AICM_CFLAGS='-O2 -fPIC -shared'
	export AICM_CFLAGS
	stream $c 'shape-infer,fuse,lower-tiled{bm=8,bn=64}' 'aicm_vcmax_f..(part, part + \(16\|8\));' 1
	unset AICM_CFLAGS
done
stream ints "$small" 'computed in the next' 1         # the chain into the store
stream ints "$small" "$inplace" 4
stream ew "$small" 'computed in the next' 1
stream ew "$small" "$inplace" 2
stream soft 'shape-infer,fuse{row-fusion=true},lower-tiled{bm=8,bn=16}' 'row segment' 1
stream soft 'shape-infer,fuse{row-fusion=true},autotune{target=cpu},lower-tiled' 'row segment' 1
# f64: the division by the row's sum through aicm_rdiv_f64 (tests/native/vdiv.c),
# and the row's store prefetched a 64-byte chunk at a time in its exp loop
# (the tiling is pinned: which the model picks moves with each refit of
# the cpu target)
sed 's/f32/f64/g; s/@soft/@soft64/' "$T/soft.aicm" >"$T/soft64.aicm"
stream soft64 'shape-infer,fuse{row-fusion=true},lower-tiled{bm=8,bn=16}' 'aicm_rdiv_f64(t' 1
stream soft64 'shape-infer,fuse{row-fusion=true},lower-tiled{bm=4,bn=128}' 'AICM_PREFETCH(a->y, pf' 1
# a program of one row is a segment of one row: its prefetches reach the
# next program's row
stream soft64 'shape-infer,fuse{row-fusion=true},lower-tiled{bm=1,bn=128}' 'AICM_PREFETCH(a->y, pf' 1
stream soft64 'shape-infer,fuse{row-fusion=true},lower-tiled{bm=1,bn=128}' 'row segment' 1
# An integer division by zero in a lane of the valid box is the error the
# other engines report (exit 1, the op named), on 1 thread and on 2, fused
# or not; zeros that only fill lanes past the edge are none (the divisor
# is add(r, 1) in the box, other=0 outside it when its kernel loads it).
cat >"$T/divz.aicm" <<'EOF'
graph @divz {
  %x = input() : (37, 53) i32
  %r = input() : (37, 53) i32
  %z = sub(%r, %r)
  %q = OP(%x, %z)
}
EOF
cat >"$T/divok.aicm" <<'EOF'
graph @divok {
  %x = input() : (37, 53) i64
  %r = input() : (37, 53) i64
  %c = const() : () i64 value=1
  %y = add(%r, %c)
  %q = div(%x, %y)
  %m = mod(%x, %y)
  %s = sum(%q) axis=1
}
EOF
for op in div mod fmod; do
	sed "s/OP/$op/" "$T/divz.aicm" >"$T/divz-$op.aicm"
	for p in "$small" 'shape-infer,lower-tiled{bm=8,bn=16}'; do
		for t in 1 2; do
			out=$("$B/aicm-run" --engine=native --pass="$p" --threads=$t --random-rest -q "$T/divz-$op.aicm" 2>&1)
			rc=$?
			if [ $rc -ne 1 ] || ! printf '%s\n' "$out" | grep -q "'%q': integer division by zero in '$op'"; then
				echo "native: $op by zero under $p on $t threads: expected exit 1 and the error, got exit $rc:"
				printf '%s\n' "$out" | sed 's/^/    /'
				fail=1
			fi
		done
	done
done
stream divok "$small" 'integer division by zero' 2
stream divok 'shape-infer,lower-tiled{bm=8,bn=16}' 'integer division by zero' 2
# The dot's micro-kernel takes its shape from the target that compiles the
# C (docs/codegen.md), the text the same for all: built for AVX-512 (6
# rows by 4 zmm), for AVX2 + FMA (6 by 2 ymm a pass over the columns) and
# for no -march at all (SSE's xmm, the AOT build), each build's FMAs or
# multiplies must be on that target's registers, AVX2's spilling none, and
# each build that this machine can run must match the reference (M = 37:
# 6-row blocks and a tail of 1; N two strips of 256 bytes, 64 f32 or 32
# f64 lanes).  No -std=c99: in ISO C mode gcc contracts no a * b + c into
# an FMA.
for dt in f32 f64; do
	nb=64
	[ $dt = f64 ] && nb=32
	cat >"$T/dotisa-$dt.aicm" <<EOF
graph @dotisa_$dt {
  %x = input() : (37, 100) $dt
  %w = input() : (100, $((nb * 2))) $dt
  %y = matmul(%x, %w)
}
EOF
	p="shape-infer,lower-tiled{bm=64,bn=$nb,bk=32}"
	"$B/aicm-opt" --pass="$p" --emit=c "$T/dotisa-$dt.aicm" >"$T/dotisa-$dt.c"
	for isa in avx512 avx2 sse; do
		case $isa in
		avx512) f='-mavx512f -mfma' reg='vfmadd[0-9]*p[sd].*%zmm' not='' flag=avx512f ;;
		avx2) f='-mavx2 -mfma' reg='vfmadd[0-9]*p[sd].*%ymm' not='%zmm' flag=avx2 ;;
		*) f='' reg='mulp[sd].*%xmm' not='%[yz]mm' flag=sse2 ;;
		esac
		# shellcheck disable=SC2086
		${CC:-cc} -O2 $f -S -o "$T/dotisa.s" "$T/dotisa-$dt.c" || fail=1
		if ! grep -q "$reg" "$T/dotisa.s" || { [ -n "$not" ] && grep -q "$not" "$T/dotisa.s"; }; then
			echo "native: the $dt dot's C built with '-O2 $f': expected '$reg'${not:+ and no '$not'} in its assembly"
			fail=1
		fi
		# AVX2's 16 ymm hold the 12 accumulators: none is spilled to the
		# stack (6 x 4 vectors of 32 bytes were, 83 stores in this C)
		if [ $isa = avx2 ] && grep -q '%ymm[0-9]*, [-0-9]*(%r[sb]p)\|(%r[sb]p), %ymm' "$T/dotisa.s"; then
			echo "native: the $dt dot's C built with '-O2 $f' spills ymm registers to the stack:"
			grep '%ymm[0-9]*, [-0-9]*(%r[sb]p)\|(%r[sb]p), %ymm' "$T/dotisa.s" | head -3 | sed 's/^/    /'
			fail=1
		fi
		grep -qw "$flag" /proc/cpuinfo || continue
		AICM_CFLAGS="-O2 $f -fPIC -shared"
		export AICM_CFLAGS
		stream "dotisa-$dt" "$p" 'aicm_dot_f..(6, ' 1
		unset AICM_CFLAGS
	done
done
# The generated exp against libm (tests/native/vexp.c), as aicm-opt --emit=c
# writes it, built with and without -march=native (the AOT build has none).
printf 'graph @vexp {\n  %%x = input() : (4, 4) f32\n  %%y = exp(%%x)\n}\n' >"$T/vexp.aicm"
"$B/aicm-opt" --pass=shape-infer,lower-tiled --emit=c "$T/vexp.aicm" |
    sed -n '/^static inline double aicm_vexp_f64/,/^}/p;/^static inline float aicm_vexp_f32/,/^}/p' >"$T/vexp.h"
if ! grep -q aicm_vexp_f64 "$T/vexp.h" || ! grep -q aicm_vexp_f32 "$T/vexp.h"; then
	echo "native: no aicm_vexp_f64/_f32 in the C of an exp graph"
	fail=1
fi
# Its loops must vectorise at -O3 on both vector widths (on AVX2, float
# selects on the result left them scalar, 3-4x slower): gcc's
# -fopt-info-vec names the loops it vectorised; compiled only, so any x86
# host checks both, and under -march=native (the engine's own flags: this
# CPU's tuning, which decides gathers and costs).  Run too, under each
# width the CPU has, and with the multiply-adds contracted as the engine
# compiles them (cc's GNU mode: FMAs round differently, -std=c99 turns
# contraction off).
widths="-O2|-O3 -march=native|-O3 -march=native -ffp-contract=fast"
# gcc itself (clang defines __GNUC__ too, and has no -fopt-info)
gcc=0
printf '' | ${CC:-cc} -E -dM - 2>/dev/null | grep -q __clang__ ||
    { printf '' | ${CC:-cc} -E -dM - 2>/dev/null | grep -q __GNUC__ && gcc=1; }
case $(uname -m) in x86_64)
	if [ "$gcc" = 1 ]; then
		for f in "-mavx2 -mfma" "-mavx512f -mfma" "-march=native"; do
			# shellcheck disable=SC2086
			${CC:-cc} -std=c99 -O3 $f -fopt-info-vec-optimized -DVEXP_H="\"$T/vexp.h\"" -c \
			    -o "$T/vexp.o" "$top/tests/native/vexp.c" 2>"$T/vexp.vec"
			for l in $(grep -n '/\* the vectorised loop' "$top/tests/native/vexp.c" | cut -d: -f1); do
				if ! grep -q "vexp.c:$l:.*loop vectorized" "$T/vexp.vec"; then
					echo "native: gcc $f did not vectorise the exp loop at tests/native/vexp.c:$l:"
					sed 's/^/    /' "$T/vexp.vec"
					fail=1
				fi
			done
		done
	fi
	grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo && widths="$widths|-O3 -mavx2 -mfma"
	grep -qw avx512f /proc/cpuinfo 2>/dev/null && widths="$widths|-O3 -mavx512f -mfma"
	;;
esac
oifs=$IFS
IFS='|'
set -f
for f in $widths; do
	IFS=$oifs
	# shellcheck disable=SC2086
	if ! ${CC:-cc} -std=c99 $f -Wall -Werror -DVEXP_H="\"$T/vexp.h\"" -o "$T/vexp" "$top/tests/native/vexp.c" -lm ||
	    ! "$T/vexp" >"$T/vexp.out"; then
		echo "native: the generated exp under $f is off from libm:"
		sed 's/^/    /' "$T/vexp.out"
		fail=1
	fi
done
IFS=$oifs
set +f
# The generated row division against a / b (tests/native/vdiv.c), the same way
# (under -O2 alone, no FMA in the target, it is a / b itself).
"$B/aicm-opt" --pass='shape-infer,fuse{row-fusion=true},lower-tiled' --emit=c "$T/soft64.aicm" |
    sed -n '/^static inline double aicm_rdiv_f64/,/^}/p' >"$T/vdiv.h"
if ! grep -q aicm_rdiv_f64 "$T/vdiv.h"; then
	echo "native: no aicm_rdiv_f64 in the C of an f64 softmax"
	fail=1
fi
# A row's division loop must vectorise too, on both widths (float selects
# and compares in it kept it scalar on AVX2: half of a 256 x 256 f64
# softmax's time).
case $(uname -m) in x86_64)
	if [ "$gcc" = 1 ]; then
		printf '#include <math.h>\n#include <stdint.h>\n#include <string.h>\n#include "%s"\n%s\n' "$T/vdiv.h" \
		    'void row(const double *restrict a, double *restrict y, double b, int n) { for (int i = 0; i < n; i++) y[i] = aicm_rdiv_f64(a[i], b); }' \
		    >"$T/vdivloop.c"
		for f in "-mavx2 -mfma" "-mavx512f -mfma" "-march=native"; do
			# shellcheck disable=SC2086
			# (gcc unswitches the loop on b's test: both copies, not one)
			${CC:-cc} -std=c99 -O3 $f -fopt-info-vec-all -c -o "$T/vdivloop.o" "$T/vdivloop.c" 2>"$T/vdiv.vec"
			if ! grep -q "vdivloop.c:5:.*loop vectorized" "$T/vdiv.vec" ||
			    grep -q "vdivloop.c:5:.*couldn't vectorize loop" "$T/vdiv.vec"; then
				echo "native: gcc $f did not vectorise a row's aicm_rdiv_f64 loop:"
				grep 'vdivloop.c:5:' "$T/vdiv.vec" | sed 's/^/    /'
				fail=1
			fi
		done
	fi
	;;
esac
for f in "-O2" "-O3 -march=native"; do
	# shellcheck disable=SC2086
	if ! ${CC:-cc} -std=c99 $f -Wall -Werror -DVDIV_H="\"$T/vdiv.h\"" -o "$T/vdiv" "$top/tests/native/vdiv.c" -lm ||
	    ! "$T/vdiv" >"$T/vdiv.out" 2>&1; then
		echo "native: the generated row division under $f is off from a / b:"
		sed 's/^/    /' "$T/vdiv.out"
		fail=1
	fi
done
# refcheck WHAT GRAPH: GRAPH on the native engine passes --check (seed 7)
refcheck() {
	out=$("$B/aicm-run" --engine=native --pass="$P" --check -q --seed=7 "$2" 2>&1) ||
	    { echo "native: $1 off from the reference:"; printf '%s\n' "$out" | sed 's/^/    /'; fail=1; }
}
# A row softmax whose 16 MiB f32 output streams (non-temporal stores, the
# tile engine's size rule) and whose row max and sum read their strips in
# place a vector at a time (no blk copy: docs/codegen.md); the in-cache
# 256 x 256 one stores plainly.
# Run against the reference, and compiled for AVX2 + FMA and AVX-512:
# the streamed block's loop and the exp loop vectorised, the store a
# vmovntps of the target's width.
"$B/aicm-opt" --pass="$P" --emit=c "$top/bench/w/w3-f32.aicm" >"$T/w3.c" 2>&1
"$B/aicm-opt" --pass="$P" --emit=c "$top/bench/w/w3s-f32.aicm" >"$T/w3s.c" 2>&1
if ! grep -q 'aicm_stream_f32(dst' "$T/w3.c" || ! grep -q '^	aicm_stream_fence();' "$T/w3.c" ||
    grep -q 'aicm_stream_f32(dst' "$T/w3s.c" || grep -q 'blk\[j\] = t' "$T/w3.c" ||
    ! grep -q 'aicm_vcmax_f32(part, &t' "$T/w3s.c" || ! grep -q 'aicm_vcsum_f32(part, &t' "$T/w3s.c"; then
	echo "native: W3 f32 does not stream its output, or w3s does, or a row max or sum is not a vector at a time"
	fail=1
fi
refcheck "W3 f32 (streamed)" "$top/bench/w/w3-f32.aicm"
case $(uname -m) in x86_64)
	if [ "$gcc" = 1 ]; then
		for f in "-mavx2 -mfma" "-mavx512f -mfma" "-march=native"; do
			# shellcheck disable=SC2086
			${CC:-cc} -std=c99 -O3 $f -fopt-info-vec-optimized -S -o "$T/w3.s" "$T/w3.c" 2>"$T/w3.vec"
			for pat in 'blk\[j\] = v' 'const float v5 = aicm_exp_f32'; do
				l=$(grep -n "$pat" "$T/w3.c" | head -1 | cut -d: -f1)
				l=$(sed -n "1,${l}p" "$T/w3.c" | grep -n 'for (' | tail -1 | cut -d: -f1)
				if ! grep -q "w3.c:$l:.*loop vectorized" "$T/w3.vec"; then
					echo "native: gcc $f did not vectorise W3's loop at line $l ($pat)"
					fail=1
				fi
			done
			# (-march=native: the host's width, which its tuning may
			# narrow to 256 bits; either is a full vector store)
			case $f in *512*) nt='vmovntps[[:space:]]*%zmm' ;; *native) nt='vmovntps[[:space:]]*%[yz]mm' ;;
			*) nt='vmovntps[[:space:]]*%ymm' ;; esac
			if ! grep -q "$nt" "$T/w3.s" || ! grep -q sfence "$T/w3.s"; then
				echo "native: gcc $f wrote no $nt or sfence for W3's streamed store"
				fail=1
			fi
		done
	fi
	;;
esac
# In f64 an elementwise chain's large output streams too (bound by its
# bytes: W5), a row segment's does not (bound by its arithmetic: W3's
# softmax); the streamed f64 block runs against the reference.
"$B/aicm-opt" --pass="$P" --emit=c "$top/bench/w/w5-f64.aicm" >"$T/w5d.c" 2>&1
"$B/aicm-opt" --pass="$P" --emit=c "$top/bench/w/w3-f64.aicm" >"$T/w3d.c" 2>&1
if ! grep -q 'aicm_stream_f64(dst' "$T/w5d.c" || grep -q 'aicm_stream_f64(dst' "$T/w3d.c"; then
	echo "native: W5 f64 does not stream its output, or W3 f64 (a row segment) does"
	fail=1
fi
refcheck "W5 f64 (streamed)" "$top/bench/w/w5-f64.aicm"
[ $fail -eq 0 ] && echo "native: cache, compiler, streaming, division and exp checks passed"
exit $fail
