# tiles.sh: how `make bench` picks its tiles, sourced by run.sh, ab.sh and
# conv.sh so that all time the same kernels: autotune's own picks (issue 18
# item 6), no tile picked by hand.  The tile engine's columns tune with
# autotune{target=cpu-tile} (the model calibrated on that engine by
# bench/calibrate.py); bench/sweep.sh checks each pick against the fastest
# config of a timed sweep.  AICM_PIPELINE overrides the whole pipeline.
#
#   tuned [TARGET]       the pipeline's tail: autotune{target=TARGET},lower-tiled
#                        (TARGET: cpu-tile, the default; cpu for the native engine)
#   picks FUSE FILE [TARGET]
#                        the tiles autotune picks for FILE's kernels, one
#                        "kind BM=.. BN=.." per kernel, for the log
tuned() {
	echo "autotune{target=${1:-cpu-tile}},lower-tiled"
}
picks() {
	"$build/aicm-opt" --pass="shape-infer,$1,autotune{target=${3:-cpu-tile}}" "$2" |
	    sed -n 's/^ *kernel @[A-Za-z0-9_]* \[\([a-z_]*\)\] \(.*\) warps=.*/\1 \2/p' | tr '\n' ';' |
	    sed 's/;$//; s/;/; /g'
}
