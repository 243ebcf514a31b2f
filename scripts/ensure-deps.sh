#!/bin/sh
# ensure-deps.sh: the build's tools, Check and FileCheck, installed when missing.
# As root it runs apt-get; otherwise it prints the one command to run.
missing=""
command -v flex >/dev/null 2>&1 || missing="$missing flex"
command -v bison >/dev/null 2>&1 || missing="$missing bison"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
# The golden tests pipe some outputs into LLVM's FileCheck (DESIGN §8).
command -v FileCheck-14 >/dev/null 2>&1 || missing="$missing llvm-14-tools"
# aicm-import's reader: protoc-c generates it from Debian's onnx.proto.
command -v protoc-c >/dev/null 2>&1 || missing="$missing protobuf-c-compiler"
[ -f /usr/include/onnx/onnx.proto ] || missing="$missing libonnx-dev"
[ -f /usr/include/protobuf-c/protobuf-c.h ] || missing="$missing libprotobuf-c-dev"
if command -v pkg-config >/dev/null 2>&1; then
	pkg-config --exists check || missing="$missing check"
else
	missing="$missing check"
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "ensure-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q $missing >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $missing >/dev/null; } ||
		{ echo "ensure-deps: apt-get install$missing failed" >&2; exit 1; }
	exit 0
fi
echo "aicm needs:$missing" >&2
echo "run: sudo apt-get install$missing" >&2
exit 1
