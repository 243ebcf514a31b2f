#!/bin/sh
# models.sh: real PyTorch models end to end (issue 17 item 3), run by `make check-models`.
#
#   sh tests/models.sh [BUILD_DIR] [NAME...]     NAME: mlp transformer cnn resnet18 (default all)
#   sh tests/models.sh --update-testdata [BUILD_DIR]
#
# scripts/export-models.py exports each model with Debian's python3-torch and
# python3-torchvision (random weights from a fixed seed, nothing downloaded)
# into BUILD_DIR/models/ as NAME.onnx, NAME.in.npy and NAME.out.npy (torch's
# own eager output).  The export is cached: it is redone only when the
# script's checksum differs from the one recorded beside the files, or a file
# is missing.  Then, per model: aicm-import NAME.onnx -o NAME.aicm, and
# aicm-run through the whole pipeline (shape-infer, fuse, autotune,
# lower-tiled) on the tile engine with NAME.in.npy as the input 'x' and
# torch's output as the expected 'y', compared with DESIGN section 16's rule
# (rtol 1e-3, atol 1e-5).  One PASS or FAIL line per model, then a count; exit
# 1 on any FAIL.  aicm-import translates all four models, so an 'unsupported:'
# from it is a FAIL too (a regression), shown as the importer's message.  The
# small models' files are also committed in testdata/models/ for their goldens
# (mlp and cnn: .onnx, .in.npy, .out.npy, and export.key, the key they were
# exported under): when the script's checksum differs from that key they are
# stale (FAIL); when torch's, torchvision's and onnx's versions match it, the
# fresh export must be byte for byte the committed one (FAIL otherwise), and
# with other versions that comparison is skipped with a note.
# --update-testdata exports mlp and cnn and copies them there, key and all
# (then 'make update-golden T=testdata/models' and review the diff). Without
# torch (or torchvision, or python3-onnx) the test is skipped with a message,
# exit 0: the small models' goldens (testdata/models/) keep running from their
# committed .onnx files.
set -u
update=0
if [ "${1:-}" = --update-testdata ]; then update=1; shift; fi
build=${1:-build}
[ $# -gt 0 ] && shift
names=${*:-mlp transformer cnn resnet18}
small="mlp cnn"
[ $update = 1 ] && names=$small
py=/usr/bin/python3
top=$(cd "$(dirname "$0")/.." && pwd)
d="$build/models"
script="$top/scripts/export-models.py"

# One interpreter start (torch takes a second to import) checks the modules
# and gives the versions for the cache key below: a new torch may export
# other ops.
if ! vers=$($py -c 'import torch, torchvision, onnx; print(torch.__version__, torchvision.__version__, onnx.__version__)' 2>/dev/null); then
	echo "check-models: SKIPPED: needs /usr/bin/python3 with torch, torchvision and onnx" \
	    "(apt-get install python3-torch python3-torchvision python3-onnx)"
	exit 0
fi
for t in aicm-import aicm-run; do
	[ -x "$build/$t" ] || { echo "models.sh: '$build/$t' is not built (expected 'make all' first)" >&2; exit 2; }
done
mkdir -p "$d" || exit 2

key="$(sha256sum "$script" | cut -d' ' -f1) $vers"
stale=""
for n in $names; do
	for f in "$n.onnx" "$n.in.npy" "$n.out.npy"; do
		[ -f "$d/$f" ] || { stale="$stale $n"; break; }
	done
	[ "$(cat "$d/$n.key" 2>/dev/null)" = "$key" ] || case " $stale " in *" $n "*) ;; *) stale="$stale $n" ;; esac
done
if [ -n "$stale" ]; then
	echo "check-models: exporting$stale (scripts/export-models.py)"
	# shellcheck disable=SC2086
	$py "$script" "$d" $stale >"$d/export.log" 2>&1 ||
	    { echo "check-models: FAIL: the export failed:"; tail -20 "$d/export.log"; exit 1; }
	for n in $stale; do echo "$key" >"$d/$n.key"; done
fi

td="$top/testdata/models"
if [ $update = 1 ]; then
	for n in $small; do cp "$d/$n.onnx" "$d/$n.in.npy" "$d/$n.out.npy" "$td/" || exit 2; done
	echo "$key" >"$td/export.key"
	echo "check-models: updated testdata/models from a fresh export (now: make update-golden T=testdata/models)"
	exit 0
fi
fail=0
tkey=$(cat "$td/export.key" 2>/dev/null)
for n in $names; do
	case " $small " in *" $n "*) ;; *) continue ;; esac
	if [ "${tkey%% *}" != "${key%% *}" ]; then
		echo "FAIL $n: testdata/models/$n.onnx is stale: scripts/export-models.py changed since it was" \
		    "exported (expected the checksum in testdata/models/export.key; run sh tests/models.sh --update-testdata)"
		fail=1
	elif [ "$tkey" != "$key" ]; then
		echo "note: $n: torch, torchvision or onnx is not the version testdata/models was exported with" \
		    "('${tkey#* }', here '$vers'): its files are not compared with a fresh export"
	else
		for f in "$n.onnx" "$n.in.npy" "$n.out.npy"; do
			cmp -s "$d/$f" "$td/$f" || { echo "FAIL $n: testdata/models/$f differs from a fresh export" \
			    "of the same script and versions (expected the same bytes)"; fail=1; }
		done
	fi
done

# The tolerance: ONNX's rule, |a - b| <= atol + rtol*|b| per element.
tol="--rtol=1e-3 --atol=1e-5"
np=0 nf=0
for n in $names; do
	log="$d/$n.log"
	rm -rf "$d/$n.aicm" "$d/$n.weights"
	start=$(date +%s.%N)
	"$build/aicm-import" "$d/$n.onnx" -o "$d/$n.aicm" >"$log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $n: aicm-import exited $rc:"; tail -5 "$log" | sed 's/^/    /'
		fail=1; nf=$((nf + 1)); continue
	fi
	# shellcheck disable=SC2086
	"$build/aicm-run" --pass=shape-infer,fuse,autotune,lower-tiled --input x="$d/$n.in.npy" \
	    --expected-output y="$d/$n.out.npy" $tol "$d/$n.aicm" >>"$log" 2>&1
	rc=$?
	secs=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }')
	cmp=$(grep '^expected %y' "$log" | sed 's/^expected %y: //')
	if [ $rc -eq 0 ] && [ -n "$cmp" ]; then
		echo "PASS $n ($secs s): $cmp"
		np=$((np + 1))
	else
		echo "FAIL $n: aicm-run exited $rc${cmp:+: $cmp}"; grep -v '^ \|^\[\|^%\|^sum=' "$log" | tail -5 | sed 's/^/    /'
		fail=1; nf=$((nf + 1))
	fi
done
echo "check-models: $np passed, $nf failed"
[ $fail -eq 0 ]
