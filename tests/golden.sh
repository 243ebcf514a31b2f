#!/bin/sh
# golden.sh: run every testdata/**/*.aicm's RUN lines and diff the output.
#
#   sh tests/golden.sh [--update] BUILD_DIR [CASE...]
#
# A case holds one or more '// RUN: cmd' lines; %s is the case's path
# (repo-relative, so diagnostics are stable), %S its folder, %t a fresh
# scratch folder.  'not cmd' expects a non-zero exit.  Commands run with
# BUILD_DIR first on PATH, through sh, so pipes into FileCheck-14 work.
# The stdout of all RUN lines, in order, must equal CASE.out and their
# stderr CASE.err (a missing file means empty).  Files named _*.aicm are
# skipped.  --update rewrites .out/.err from what the tools print now
# (review 'git diff testdata/' before committing).  RUN lines name the
# tools bare (aicm-opt, aicm-run, aicm-import); a case that reads another
# file beside it (an .onnx model, a .npy) names it %S/FILE.  AICM_VALGRIND=1
# runs the three tools under memcheck: any error or leak fails the case,
# found in memcheck's own log files, so that a RUN line that pipes the tool
# or throws its stderr away cannot hide one.  AICM_GOLDEN_JOBS=N (default:
# the number of CPUs) runs the cases in N workers, case i in worker i mod N,
# each with its own scratch and memcheck log folders; a worker's report is
# printed whole when it ends, so reports never interleave.  memcheck runs a
# process on one core, which is why the parallel workers halve
# check-valgrind's time on two cores.
# Modelled on cproc's runtests and tcc's tests2 update mode.
update=0
if [ "$1" = --update ]; then update=1; shift; fi
build=${1:-build}
shift 2>/dev/null
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
bin=$(cd "$build" && pwd) || exit 2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aicm-golden.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM

if [ "${AICM_VALGRIND:-0}" = 1 ]; then
	mkdir -p "$scratch/vg"
	for t in aicm-opt aicm-run aicm-import; do
		[ -x "$bin/$t" ] || continue
		# The log folder is the running worker's, read when the wrapper runs.
		cat >"$scratch/vg/$t" <<EOT
#!/bin/sh
exec valgrind -q --log-file="\$AICM_VG_LOG/log.%p" --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 "$bin/$t" "\$@"
EOT
		chmod +x "$scratch/vg/$t"
	done
	PATH="$scratch/vg:$bin:$PATH"
else
	PATH="$bin:$PATH"
fi
export PATH

if [ $# -gt 0 ]; then
	cases=$(for c in "$@"; do if [ -d "$c" ]; then find "$c" -name '*.aicm'; else echo "$c"; fi; done | sort)
else
	cases=$(find testdata -name '*.aicm' ! -name '_*' | sort)
fi

jobs=${AICM_GOLDEN_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$jobs" in ''|*[!0-9]*|0) jobs=1 ;; esac

# worker W: runs the cases whose index is W modulo $jobs, with the scratch
# folder $scratch/wW; leaves its counts in wW/count and its report in wW/log.
worker() {
	w=$1
	ws="$scratch/w$w"
	mkdir -p "$ws/vg"
	AICM_VG_LOG="$ws/vg"
	export AICM_VG_LOG
	pass=0
	fail=0
	i=0
	for c in $cases; do
		i=$((i + 1))
		[ $(((i - 1) % jobs)) -eq "$w" ] || continue
		base=${c%.aicm}
		dir=$(dirname "$c")
		grep -q '^// RUN:' "$c" || continue
		t="$ws/t"
		rm -rf "$t" && mkdir -p "$t"
		: >"$ws/out"
		: >"$ws/err"
		ok=1
		why=""
		grep '^// RUN:' "$c" | sed 's|^// RUN: *||' >"$ws/runs"
		while IFS= read -r cmd; do
			expect_fail=0
			case "$cmd" in
			"not "*) expect_fail=1; cmd=${cmd#not } ;;
			esac
			cmd=$(printf '%s' "$cmd" | sed -e "s|%s|$c|g" -e "s|%S|$dir|g" -e "s|%t|$t|g")
			sh -c "$cmd" >>"$ws/out" 2>>"$ws/err" </dev/null
			rc=$?
			if [ $rc -eq 99 ] && [ "${AICM_VALGRIND:-0}" = 1 ]; then
				ok=0; why="valgrind found errors or leaks: $cmd"
			elif [ $expect_fail = 1 ] && [ $rc -eq 0 ]; then
				ok=0; why="expected a non-zero exit: $cmd"
			elif [ $expect_fail = 0 ] && [ $rc -ne 0 ]; then
				ok=0; why="exit $rc: $cmd"
			elif [ $rc -ge 3 ] && [ $rc -ne 99 ]; then
				ok=0; why="exit $rc (crash or internal error): $cmd"
			fi
		done <"$ws/runs"
		if [ "${AICM_VALGRIND:-0}" = 1 ]; then
			for l in "$ws"/vg/log.*; do
				[ -s "$l" ] || continue
				ok=0
				why="${why:+$why; }valgrind found errors or leaks:"
				sed 's/^/    /' "$l" | head -40
			done
			rm -f "$ws"/vg/log.*
		fi
		if [ $update = 1 ]; then
			for k in out err; do
				if [ -s "$ws/$k" ]; then cp "$ws/$k" "$base.$k"; else rm -f "$base.$k"; fi
			done
		fi
		for k in out err; do
			want="$base.$k"
			[ -f "$want" ] || want=/dev/null
			if ! diff -u "$want" "$ws/$k" >"$ws/diff.$k"; then
				ok=0
				why="${why:+$why; }$k differs"
			fi
		done
		if [ $ok = 1 ]; then
			pass=$((pass + 1))
			[ -n "$VERBOSE" ] && echo "[PASS] $c"
		else
			fail=$((fail + 1))
			echo "[FAIL] $c: $why"
			sed 's/^/    /' "$ws/diff.out" "$ws/diff.err" | head -60
		fi
	done
	echo "$pass $fail" >"$ws/count"
}

w=0
while [ $w -lt "$jobs" ]; do
	mkdir -p "$scratch/w$w"
	worker $w >"$scratch/w$w/log" 2>&1 &
	w=$((w + 1))
done
wait
pass=0
fail=0
w=0
while [ $w -lt "$jobs" ]; do
	cat "$scratch/w$w/log"
	if [ -f "$scratch/w$w/count" ]; then
		read -r p f <"$scratch/w$w/count"
		pass=$((pass + p))
		fail=$((fail + f))
	else
		echo "[FAIL] golden worker $w ended without its counts"
		fail=$((fail + 1))
	fi
	w=$((w + 1))
done
echo "golden: $pass passed, $fail failed"
[ $fail -eq 0 ]
