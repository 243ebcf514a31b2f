# blas_env.sh: sourced by the benchmarks that time numpy or PyTorch beside
# aicm (DESIGN sections 11 and 16: compare against OpenBLAS's fastest
# kernel for this CPU).  Debian's OpenBLAS 0.3.21 falls back to its generic
# Prescott kernel on CPUs it does not know (4-5x slower at matmul), so the
# kernel a library loads is read off OPENBLAS_VERBOSE=2 and, when it is a
# generic one, the matching kernel is named for that library's processes
# alone: Cooperlake on an AVX-512 CPU with avx512_bf16, SkylakeX on other
# AVX-512 ones, Haswell on AVX2 ones.  (In 0.3.21 Cooperlake's dgemm and
# sgemm are SkylakeX's kernels, bf16 added: timed equal here, docs/perf.md;
# 0.3.21 prints "Core not found: Cooperlake" and then loads it all the
# same, so the core loaded under the named one is read back and printed.)
# Needs $py.
#
# Sourcing this file unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for the
# whole benchmark: a machine's environment may name a kernel of its own
# (seen: OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE=512 on an AMD Zen 5,
# family 26, with AVX-512, where OpenBLAS itself picks Cooperlake: numpy
# 47.8 GFLOP/s f64 at 1024^3 under the inherited Haswell, 79 under its own
# pick), and every library's runs must get the kernel printed here, whether
# or not the script passes $nenv or $tenv through `env -u` itself.
#
#   blas_env VAR LABEL CODE    runs CODE (a BLAS matmul) under $py, prints
#                              the kernel LABEL loaded, and sets VAR to the
#                              OPENBLAS_CORETYPE=... its runs need, or empty
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
blas_core() {
	env -u OPENBLAS_CORETYPE OPENBLAS_VERBOSE=2 $1 $py -c "$2" 2>&1 |
	    sed -n 's/^Core: *\([A-Za-z0-9]*\).*/\1/p' | head -1
}
blas_env() {
	_core=$(blas_core "" "$3")
	_env=""
	case "$_core" in
	Prescott|Core2|Nehalem|"")
		if grep -q avx512_bf16 /proc/cpuinfo; then _env="OPENBLAS_CORETYPE=Cooperlake"
		elif grep -q avx512f /proc/cpuinfo; then _env="OPENBLAS_CORETYPE=SkylakeX"
		elif grep -q avx2 /proc/cpuinfo; then _env="OPENBLAS_CORETYPE=Haswell"; fi ;;
	esac
	_got=""
	[ -n "$_env" ] && _got=$(blas_core "$_env" "$3")
	# an OpenBLAS that does not know Cooperlake: SkylakeX, its kernels
	if [ "$_env" = OPENBLAS_CORETYPE=Cooperlake ] && [ "$_got" != Cooperlake ]; then
		_env="OPENBLAS_CORETYPE=SkylakeX"
		_got=$(blas_core "$_env" "$3")
	fi
	eval "$1=\$_env"
	echo "  OpenBLAS core for $2: ${_core:-none loaded}${_env:+; generic on this CPU, so $2 runs with $_env (loaded: ${_got:-none})}"
}
