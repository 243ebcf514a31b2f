# blas_env.sh: sourced by the benchmarks that time numpy or PyTorch beside
# aicm (DESIGN sections 11 and 16: compare against OpenBLAS's fastest
# kernel for this CPU).  Debian's OpenBLAS 0.3.21 falls back to its generic
# Prescott kernel on CPUs it does not know (4-5x slower at matmul), so the
# kernel a library loads is read off OPENBLAS_VERBOSE=2 and, when it is a
# generic one on an AVX-512 or AVX2 CPU, the matching kernel is named for
# that library's processes alone.  Needs $py.
#
#   blas_env VAR LABEL CODE    runs CODE (a BLAS matmul) under $py, prints
#                              the kernel LABEL loaded, and sets VAR to the
#                              OPENBLAS_CORETYPE=... its runs need, or empty
blas_env() {
	_core=$(env -u OPENBLAS_CORETYPE OPENBLAS_VERBOSE=2 $py -c "$3" 2>&1 |
	    sed -n 's/.*Core: *\([A-Za-z0-9]*\).*/\1/p' | head -1)
	_env=""
	case "$_core" in
	Prescott|Core2|Nehalem|"")
		if grep -q avx512f /proc/cpuinfo; then _env="OPENBLAS_CORETYPE=SkylakeX"
		elif grep -q avx2 /proc/cpuinfo; then _env="OPENBLAS_CORETYPE=Haswell"; fi ;;
	esac
	eval "$1=\$_env"
	echo "  OpenBLAS core for $2: ${_core:-none loaded}${_env:+; generic on this CPU, so $2 runs with $_env}"
}
