# tiles.sh: the tile sizes of `make bench`'s workloads, sourced by run.sh and
# ab.sh so that both time the same kernels.
#
# Tile sizes per workload, picked by timing a few (docs/perf.md); lower-tiled's
# default 32x32 tiles are 1.5-3x slower here: short rows defeat the prefetcher.
# AICM_PIPELINE overrides them for every workload.
tiles() {
	case $1-${2:-f64} in
	w1-f32) echo '{bm=64,bn=128,bk=64}' ;;   # f32: wider b panels, faster on 1 and 2 threads
	w1-*) echo '{bm=64,bn=64,bk=64}' ;;
	w2-*) echo '{bm=8,bn=4096}' ;;
	w5-*) echo '{bm=1,bn=4096}' ;;
	*) echo '' ;;
	esac
}
