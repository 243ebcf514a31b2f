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
# or throws its stderr away cannot hide one.
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
		cat >"$scratch/vg/$t" <<EOT
#!/bin/sh
exec valgrind -q --log-file="$scratch/vg/log.%p" --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 "$bin/$t" "\$@"
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

pass=0
fail=0
for c in $cases; do
	base=${c%.aicm}
	dir=$(dirname "$c")
	grep -q '^// RUN:' "$c" || continue
	t="$scratch/t"
	rm -rf "$t" && mkdir -p "$t"
	: >"$scratch/out"
	: >"$scratch/err"
	ok=1
	why=""
	grep '^// RUN:' "$c" | sed 's|^// RUN: *||' >"$scratch/runs"
	while IFS= read -r cmd; do
		expect_fail=0
		case "$cmd" in
		"not "*) expect_fail=1; cmd=${cmd#not } ;;
		esac
		cmd=$(printf '%s' "$cmd" | sed -e "s|%s|$c|g" -e "s|%S|$dir|g" -e "s|%t|$t|g")
		sh -c "$cmd" >>"$scratch/out" 2>>"$scratch/err" </dev/null
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
	done <"$scratch/runs"
	if [ "${AICM_VALGRIND:-0}" = 1 ]; then
		for l in "$scratch"/vg/log.*; do
			[ -s "$l" ] || continue
			ok=0
			why="${why:+$why; }valgrind found errors or leaks:"
			sed 's/^/    /' "$l" | head -40
		done
		rm -f "$scratch"/vg/log.*
	fi
	if [ $update = 1 ]; then
		for k in out err; do
			if [ -s "$scratch/$k" ]; then cp "$scratch/$k" "$base.$k"; else rm -f "$base.$k"; fi
		done
	fi
	for k in out err; do
		want="$base.$k"
		[ -f "$want" ] || want=/dev/null
		if ! diff -u "$want" "$scratch/$k" >"$scratch/diff.$k"; then
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
		sed 's/^/    /' "$scratch/diff.out" "$scratch/diff.err" | head -60
	fi
done
echo "golden: $pass passed, $fail failed"
[ $fail -eq 0 ]
