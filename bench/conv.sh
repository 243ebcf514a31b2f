#!/bin/sh
# conv.sh: `make bench`'s conv2d and max_pool2d against PyTorch (issue 16).
#
#   sh bench/conv.sh [BUILD_DIR]      env: REPS (10), ROUNDS (5), CONV_PIPE, POOL_PIPE
#
# conv2d f32, x (8, 64, 56, 56), w (64, 64, 3, 3), pads 1: aicm's implicit GEMM
# (lower-tiled, tile executor) against PyTorch's conv2d, one thread each; the
# target is aicm <= 1.5x PyTorch's time.  max_pool2d 3x3 stride 2 on the conv's
# result: aicm's GB/s (its input read once and its output written once, over
# wall time) against the single-thread copy bandwidth that bench/peak.c
# measures in the same run (wall time, as run.sh holds GB/s to it); the target
# is >= 50%.  PyTorch is Debian's python3-torch (installed here when missing,
# as root), run as DESIGN section 16 says: one thread, inference mode, timed
# after a warm-up, torch.__config__.show() printed; its conv is mkldnn's, but
# the OpenBLAS kernel rule of section 11 is applied all the same (a generic
# core on an AVX-512 or AVX2 CPU gets OPENBLAS_CORETYPE for PyTorch's runs,
# and the script says so).  ROUNDS rounds alternate aicm and PyTorch; each
# side's best time counts.
set -u
build=${1:-build}
reps=${REPS:-10}
rounds=${ROUNDS:-5}
# Tiles are autotune's own (issue 18 item 6: no tile picked by hand), with
# the tile engine's model, target=cpu-tile (bench/tiles.sh); CONV_PIPE and
# POOL_PIPE override the pipelines.
. "$(dirname "$0")/tiles.sh"
conv_pipe=${CONV_PIPE:-shape-infer,fuse,$(tuned cpu-tile)}
pool_pipe=${POOL_PIPE:-shape-infer,fuse,$(tuned cpu-tile)}
py=/usr/bin/python3
here=$(dirname "$0")
d="$build/bench-data/conv"
mkdir -p "$d/out"

if ! $py -c 'import torch' 2>/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y python3-torch >/dev/null || exit 2
	else
		echo "bench: needs python3-torch: sudo apt-get install -y python3-torch" >&2
		exit 2
	fi
fi

echo "conv2d and max_pool2d against PyTorch (issue 16), 1 thread"
torch_config_lines=9
. "$here/torch_env.sh"

cc -O2 -pthread -o "$build/bench-peak" "$here/peak.c" || exit 2
"$build/bench-peak" >"$d/peak.txt" || exit 2
copy=$(awk '$1 == "stream_copy_gbs_t1" { print $2 }' "$d/peak.txt")
copyc=$(awk '$1 == "stream_copy_gbs_t1_cpu" { print $2 }' "$d/peak.txt")
echo "  copy bandwidth, 1 thread (bench/peak.c): $copy GB/s wall ($copyc by CPU time)"

[ -f "$d/x.npy" ] || $py "$here/conv.py" gen "$d" || exit 2
: >"$d/rounds.txt"
for r in $(seq "$rounds"); do
	"$build/aicm-run" --threads=1 --bench="$reps" --pass="$conv_pipe" \
	    --input x="$d/x.npy" --input w="$d/w.npy" --output-dir "$d/out" "$here/w/conv-f32.aicm" \
	    >"$d/conv.txt" 2>&1 || { echo "conv: aicm-run failed:"; tail -5 "$d/conv.txt"; exit 1; }
	"$build/aicm-run" --threads=1 --bench="$reps" --pass="$pool_pipe" \
	    --input y="$d/out/y.npy" --output-dir "$d/out" "$here/w/pool-f32.aicm" \
	    >"$d/pool.txt" 2>&1 || { echo "pool: aicm-run failed:"; tail -5 "$d/pool.txt"; exit 1; }
	env $tenv $py "$here/conv.py" torch "$d" "$reps" >"$d/torch.txt" 2>&1 ||
	    { echo "PyTorch failed:"; tail -5 "$d/torch.txt"; exit 1; }
	echo "$(sed -n 's/^bench:.*min \([0-9.]*\) ms.*/\1/p' "$d/conv.txt")" \
	    "$(sed -n 's/^bench:.*min \([0-9.]*\) ms.*/\1/p' "$d/pool.txt")" \
	    "$(sed -n 's/.*conv \([0-9.]*\) ms, pool \([0-9.]*\) ms.*/\1 \2/p' "$d/torch.txt")" >>"$d/rounds.txt"
done
head -1 "$d/torch.txt" | sed 's/:.*//; s/^/  /'
$py "$here/conv.py" err "$d" "$d/out" | sed 's/^/  aicm vs PyTorch /'
awk -v copy="$copy" -v ct="$(picks fuse "$here/w/conv-f32.aicm")" -v pt="$(picks fuse "$here/w/pool-f32.aicm")" '
function mn(a, b) { return a == "" || b < a ? b : a }
{ ac = mn(ac, $1); ap = mn(ap, $2); tc = mn(tc, $3); tp = mn(tp, $4) }
END {
	bytes = (8 * 64 * 56 * 56 + 8 * 64 * 27 * 27) * 4
	gb = bytes / (ap * 1e6)
	printf "  conv2d f32 (8,64,56,56) * (64,64,3,3) pads 1: aicm %.2f ms (%.1f GFLOP/s, autotune: %s), PyTorch %.2f ms: ratio %.3f\n", ac, 2 * 8 * 64 * 56 * 56 * 576 / (ac * 1e6), ct, tc, ac / tc
	printf "  max_pool2d 3x3/2 on its result: aicm %.3f ms = %.2f GB/s (autotune: %s), PyTorch %.3f ms; %.0f%% of the copy bandwidth\n", ap, gb, pt, tp, 100 * gb / copy
	print "targets (issue 16), from this run:"
	printf "  conv2d f32 1 thread: aicm/PyTorch %.3f, target <= 1.5: %s\n", ac / tc, (ac / tc <= 1.5) ? "met" : "NOT met"
	printf "  max_pool2d 1 thread: %.2f GB/s = %.0f%% of copy (%.1f GB/s), target >= 50%%: %s\n", gb, 100 * gb / copy, copy, (gb >= 0.5 * copy) ? "met" : "NOT met"
}' "$d/rounds.txt"
