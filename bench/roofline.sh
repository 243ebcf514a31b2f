#!/bin/sh
# roofline.sh: the roofline plot of docs/perf.md from `make bench`'s output.
#
#   sh bench/roofline.sh BENCH_OUTPUT PEAK_TXT OUT.png [THREADS]
#
# BENCH_OUTPUT is what bench/run.sh printed (its table rows), PEAK_TXT the
# figures bench/peak.c wrote (BUILD/bench-data/peak.txt).  Each workload is
# placed at its arithmetic intensity (ideal flops / ideal bytes) and its
# GFLOP/s, aicm and numpy both, under the roofs min(peak FLOP/s, AI x triad
# bandwidth) of f64 and f32 for THREADS (default 1) threads.  Needs gnuplot.
set -eu
in=$1 peak=$2 out=$3 t=${4:-1}
command -v gnuplot >/dev/null || { echo "roofline: gnuplot is not installed (apt-get install -y gnuplot-nox)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pk() { awk -v k="$1" '$1 == k { print $2 }' "$peak"; }
isa=avx512
[ -n "$(pk peak_gflops_avx512_f64_t1_cpu)" ] || isa=avx2
tt=$t; [ "$t" = 1 ] || tt=$(nproc)
p64=$(pk peak_gflops_${isa}_f64_t${tt}_cpu) p32=$(pk peak_gflops_${isa}_f32_t${tt}_cpu)
bw=$(pk stream_triad_gbs_t${tt}_cpu)
# rows: wl dt thr numpy-ms aicm-ms ratio GFLOP/s GB/s ...
awk -v t="$t" '$1 ~ /^w[1-5]$/ && $3 == t && $8 > 0 {
	ai = $7 / $8; printf "%g %g %g \"%s %s\"\n", ai, $7, $7 * $6, toupper($1), $2
}' "$in" >"$tmp/pts"
cat >"$tmp/plot.gp" <<EOF
set terminal pngcairo size 900,600 font ",10"
set output "$out"
set logscale xy
set xrange [0.01:1000]
set yrange [0.01:2*$p32]
set xlabel "arithmetic intensity (flop / byte, ideal traffic)"
set ylabel "GFLOP/s"
set title "Roofline, $t thread(s): $isa peak f64 $p64, f32 $p32 GFLOP/s; triad $bw GB/s (per-thread CPU time)"
set key left top
set grid
roof(x, p) = (x * $bw < p) ? x * $bw : p
plot roof(x, $p64) title "roof f64" lw 2 lc rgb "#1f77b4", \\
     roof(x, $p32) title "roof f32" lw 2 dt 2 lc rgb "#1f77b4", \\
     "$tmp/pts" using 1:2 with points pt 7 ps 1.5 lc rgb "#d62728" title "aicm", \\
     "$tmp/pts" using 1:2:4 with labels offset 0,1 font ",8" notitle, \\
     "$tmp/pts" using 1:3 with points pt 6 ps 1.5 lc rgb "#2ca02c" title "numpy"
EOF
gnuplot "$tmp/plot.gp"
echo "roofline: wrote $out"
