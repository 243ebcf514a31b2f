#!/bin/sh
# models.sh: `make bench`'s real models (issue 17 item 4): aicm against PyTorch's CPU execution.
#
#   sh bench/models.sh [BUILD_DIR] [NAME...]   NAME: mlp transformer cnn resnet18 (default all)
#                                              env: REPS (20), ROUNDS (3)
#
# First tests/models.sh exports the models (cached in BUILD_DIR/models/) and
# checks aicm's output on each against torch's: a figure from a wrong output
# is no figure, so a model that fails there is not measured.  Then
# bench/models.py measures, one thread on both sides, side by side in
# alternating rounds: aicm-import's and aicm-opt's (shape-infer, fuse,
# autotune{target=cpu-tile}, lower-tiled) wall time, aicm-run's execution time (--bench median),
# the peak RSS of each, and PyTorch eager and TorchScript (trace + freeze)
# under inference mode, as DESIGN section 16 says.  PyTorch's BLAS is
# Debian's OpenBLAS: section 11's rule applies (the kernel it loads is printed;
# a generic core on an AVX-512 or AVX2 CPU gets OPENBLAS_CORETYPE for
# PyTorch's runs alone, and the script says so).  The load average is printed
# before and after: the machine is shared.
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
names=${*:-mlp transformer cnn resnet18}
reps=${REPS:-20}
rounds=${ROUNDS:-3}
py=/usr/bin/python3
here=$(dirname "$0")

if ! $py -c 'import torch, torchvision, onnx' 2>/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y python3-torch python3-torchvision python3-onnx >/dev/null || exit 2
	else
		echo "bench: needs python3-torch, python3-torchvision and python3-onnx:" \
		    "sudo apt-get install -y python3-torch python3-torchvision python3-onnx" >&2
		exit 2
	fi
fi

echo "real models against PyTorch (issue 17), 1 thread: $(date -u '+%Y-%m-%d %H:%M UTC')," \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
. "$here/torch_env.sh"
echo "aicm SIMD path: ${AICM_ISA:-best available} (AICM_ISA=avx512|avx2|portable to force)"

ok=""
# shellcheck disable=SC2086
sh "$here/../tests/models.sh" "$build" $names >"$build/models-check.txt" 2>&1
sed 's/^/  /' "$build/models-check.txt"
for n in $names; do
	grep -q "^PASS $n " "$build/models-check.txt" && ok="$ok $n"
done
[ -n "$ok" ] || { echo "bench: no model passed tests/models.sh; nothing to measure"; exit 1; }
[ "$ok" = " $names" ] || echo "bench: measuring only$ok (the others failed above)"
# shellcheck disable=SC2086
MODELS_TORCH_ENV="$tenv" $py "$here/models.py" measure "$build" "$build/models" "$reps" "$rounds" $ok
rc=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
