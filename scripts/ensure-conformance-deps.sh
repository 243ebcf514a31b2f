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
exec sh "$(dirname "$0")/install-missing.sh" "make conformance" $missing
