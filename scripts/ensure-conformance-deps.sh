#!/bin/sh
# ensure-conformance-deps.sh: what 'make conformance' needs beyond the build,
# installed when missing, as scripts/ensure-deps.sh does for the build: ONNX's
# backend test data (libonnx-testdata) and Debian's python3-onnx with numpy
# for /usr/bin/python3, which converts the tests' .pb files to .npy.  As root
# it runs apt-get; otherwise it prints the one command to run.
missing=""
dpkg -s libonnx-testdata >/dev/null 2>&1 && [ -d /usr/share/libonnx-testdata/data ] ||
	missing="$missing libonnx-testdata"
/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || missing="$missing python3-numpy"
/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1 || missing="$missing python3-onnx"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-conformance-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q $missing >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $missing >/dev/null; } ||
		{ echo "ensure-conformance-deps: apt-get install$missing failed" >&2; exit 1; }
	exit 0
fi
echo "make conformance needs:$missing" >&2
echo "run: sudo apt-get install$missing" >&2
exit 1
