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
exec sh "$(dirname "$0")/install-missing.sh" "aicm" $missing
