# torch_env.sh: sourced by bench/conv.sh and bench/models.sh, which time
# PyTorch beside aicm.  Prints PyTorch's build configuration (its first
# $torch_config_lines lines; all when unset) and which OpenBLAS kernel it
# loads, and sets $tenv to the OPENBLAS_CORETYPE= that its processes run
# with when that kernel is OpenBLAS's generic one on a CPU it does not
# know (DESIGN sections 11 and 16: compare against the fast kernel), and
# always OPENBLAS_NUM_THREADS=1.  Needs $py.
#
# torch.set_num_threads(1) sizes PyTorch's own (OpenMP) pool, not the
# thread pool of Debian's libopenblas0-pthread, which PyTorch's matmuls run
# on: without the variable a "one-thread" PyTorch process holds two threads
# and its GEMMs take the second core whenever it is idle (on the Zen 5 of
# session 12: a 128x256 by 256x2048 torch.mm 0.43 ms against 0.72 with
# OPENBLAS_NUM_THREADS=1; docs/perf.md), so a ratio against aicm's one thread
# measured the other core's idleness.  bench/blocks.sh exports it for numpy
# and PyTorch alike; here it goes into $tenv, for conv.sh's and models.sh's
# PyTorch processes.
$py -c 'import torch; print(torch.__config__.show())' | sed 's/^/  /' | grep -v '^ *$' |
    cut -c1-160 | head -n "${torch_config_lines:-1000}"
. "$here/blas_env.sh"
blas_env tenv PyTorch 'import torch; torch.ones(64, 64) @ torch.ones(64, 64)'
tenv="${tenv:+$tenv }OPENBLAS_NUM_THREADS=1"
echo "  PyTorch runs with: $tenv"
