#!/bin/sh
# run.sh: run every libFuzzer harness for SECONDS each (make fuzz).
#
#   sh tests/fuzz/run.sh [SECONDS] [NAME...]
#
# NAME is a harness tests/fuzz/fuzz_NAME.c (built by make fuzz-bins); none
# given: every one.  One fuzzer at a time, at nice 19, one job: the machine
# is shared.  Each harness NAME works on build-fuzz/corpus/NAME (kept
# between runs, so runs add up), seeded from tests/fuzz/seeds/NAME and, for
# the harnesses whose input is a graph as written, from testdata/ (import:
# from testdata/import's .onnx files and, when it is installed, Debian's
# libonnx-testdata, whose models are not kept in this tree).  The
# dictionary is tests/fuzz/NAME.dict when there is one, else aicm.dict for
# the harnesses that read graph text.  A crash leaves
# build-fuzz/crash-NAME-*; the script fails.
# With FUZZ_FORK=1 the fuzzer runs in fork mode and keeps going past a
# crash (so that a known bug does not stop the search for the next), at a
# large cost in executions per second; by default it stops at the first.
# The last 'cov:'/'ft:' line and the execution count of each run go to
# build-fuzz/stats.txt (docs/reliability.md records them).
secs=${1:-60}
shift 2>/dev/null
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
names=${*:-$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c | sed 's/^fuzz_//'; done)}
status=0
for n in $names; do
	bin=build-fuzz/fuzz_$n
	[ -x "$bin" ] || { echo "run.sh: no $bin (make fuzz-bins)"; status=2; continue; }
	corpus=build-fuzz/corpus/$n
	mkdir -p "$corpus"
	seeds=""
	[ -d "tests/fuzz/seeds/$n" ] && seeds="tests/fuzz/seeds/$n"
	dict=""
	case $n in
	parse|opt|tile|grid|roundtrip|verifydiag) seeds="$seeds testdata"; dict=-dict=tests/fuzz/aicm.dict ;;
	threads) dict=-dict=tests/fuzz/aicm.dict ;;   # its seeds carry the option bytes
	import)
		# the .onnx files of testdata/import, and ONNX's own test models
		# from Debian's libonnx-testdata when it is installed (not kept
		# here): those small enough for -max_len, copied to one folder
		seeds=build-fuzz/seeds-import
		rm -rf "$seeds" && mkdir -p "$seeds"
		find testdata/import /usr/share/libonnx-testdata/data -name '*.onnx' -size -4097c \
		    2>/dev/null | while IFS= read -r f; do
			cp "$f" "$seeds/$(printf '%s' "$f" | tr '/' '_')"
		done
		[ -d tests/fuzz/seeds/import ] && seeds="$seeds tests/fuzz/seeds/import"
		;;
	esac
	[ -f "tests/fuzz/$n.dict" ] && dict=-dict=tests/fuzz/$n.dict
	log=build-fuzz/fuzz-$n.log
	echo "fuzz: $n for ${secs}s"
	before=$(ls build-fuzz/crash-$n-* 2>/dev/null | wc -l)
	fork=""
	[ "${FUZZ_FORK:-0}" = 1 ] && fork="-fork=1 -ignore_crashes=1"
	nice -n 19 "$bin" $fork -max_total_time="$secs" -timeout=10 \
	    -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="build-fuzz/crash-$n-" $dict \
	    "$corpus" $seeds >"$log" 2>&1
	rc=$?
	after=$(ls build-fuzz/crash-$n-* 2>/dev/null | wc -l)
	[ "$after" -gt "$before" ] && rc=1
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	runs=$(printf '%s' "$last" | sed 's/^#\([0-9]*\).*/\1/')
	echo "$(date -u +%FT%TZ) $n ${secs}s rc=$rc runs=$runs $last" >>build-fuzz/stats.txt
	echo "fuzz: $n rc=$rc runs=$runs $last"
	if [ $rc -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|fuzz:|internal error' "$log" | sort | uniq -c | head -20
		status=1
	fi
done
exit $status
