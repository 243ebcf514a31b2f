# torch_env.sh: sourced by bench/conv.sh and bench/models.sh, which time
# PyTorch beside aicm.  Prints PyTorch's build configuration (its first
# $torch_config_lines lines; all when unset) and which OpenBLAS kernel it
# loads, and sets $tenv to the OPENBLAS_CORETYPE= that its processes run
# with when that kernel is OpenBLAS's generic one on a CPU it does not
# know (DESIGN sections 11 and 16: compare against the fast kernel); empty
# otherwise.  Needs $py.
$py -c 'import torch; print(torch.__config__.show())' | sed 's/^/  /' | grep -v '^ *$' |
    cut -c1-160 | head -n "${torch_config_lines:-1000}"
. "$here/blas_env.sh"
blas_env tenv PyTorch 'import torch; torch.ones(64, 64) @ torch.ones(64, 64)'
