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
# exit 2.  A few seconds.
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
[ $fail -eq 0 ] && echo "native: cache and compiler checks passed"
exit $fail
