# torch_env.sh: sourced by bench/conv.sh and bench/models.sh, which time
# PyTorch beside aicm.  Prints PyTorch's build configuration (its first
# $torch_config_lines lines; all when unset) and which OpenBLAS kernel it
# loads, and sets $tenv to the OPENBLAS_CORETYPE= that its processes run
# with when that kernel is OpenBLAS's generic one on a CPU it does not
# know (DESIGN sections 11 and 16: compare against the fast kernel); empty
# otherwise.  Needs $py.
$py -c 'import torch; print(torch.__config__.show())' | sed 's/^/  /' | grep -v '^ *$' |
    cut -c1-160 | head -n "${torch_config_lines:-1000}"
core=$(OPENBLAS_VERBOSE=2 $py -c 'import torch; torch.ones(64, 64) @ torch.ones(64, 64)' 2>&1 |
    sed -n 's/.*Core: *\([A-Za-z0-9]*\).*/\1/p' | head -1)
tenv=""
case "$core" in
Prescott|Core2|Nehalem|"")
	if grep -q avx512f /proc/cpuinfo; then tenv="OPENBLAS_CORETYPE=SkylakeX"
	elif grep -q avx2 /proc/cpuinfo; then tenv="OPENBLAS_CORETYPE=Haswell"; fi ;;
esac
echo "  OpenBLAS core for PyTorch: ${core:-none loaded}${tenv:+; generic on this CPU, so PyTorch runs with $tenv}"
