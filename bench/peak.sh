# peak.sh: sourced by the benchmarks that hold aicm to this machine's roofs
# (bench/run.sh, bench/native.sh): builds and runs bench/peak.c once per
# run, so that every figure is judged against limits measured in the same
# run, and prints them.  Needs $here (the bench folder).
#
#   peak_run BUILD_DIR DATA_DIR   measures; sets $isa (avx512 or avx2) and
#                                 $all (the cores), prints the roofs
#   pk KEY                        one of peak.c's figures, e.g.
#                                 pk stream_triad_gbs_t1_cpu
peak_run() {
	all=$(nproc)
	cc -O2 -pthread -o "$1/bench-peak" "$here/peak.c" || exit 2
	"$1/bench-peak" >"$2/peak.txt" || exit 2
	_peak="$2/peak.txt"
	isa=avx512
	[ -z "$(pk peak_gflops_avx512_f64_t1_cpu)" ] && isa=avx2
	echo "peak (per-thread CPU time; wall time in parentheses, the load steals it):"
	for _t in 1 $all; do
		[ "$_t" = 1 ] || [ "$all" -gt 1 ] || continue
		echo "  $_t thread(s): $isa f64 $(pk peak_gflops_${isa}_f64_t${_t}_cpu) GFLOP/s ($(pk peak_gflops_${isa}_f64_t$_t)), f32 $(pk peak_gflops_${isa}_f32_t${_t}_cpu) GFLOP/s ($(pk peak_gflops_${isa}_f32_t$_t)), triad $(pk stream_triad_gbs_t${_t}_cpu) GB/s ($(pk stream_triad_gbs_t$_t); plain stores $(pk stream_triad_plain_gbs_t$_t), non-temporal $(pk stream_triad_nt_gbs_t$_t)), copy $(pk stream_copy_gbs_t${_t}_cpu) GB/s ($(pk stream_copy_gbs_t$_t))"
		[ "$_t" = "$all" ] && break
	done
}
pk() { awk -v k="$1" '$1 == k { print $2 }' "$_peak"; }
