#!/usr/bin/env bash
# s36 call D (device), the same bundle: the spread (issue 15's five fresh processes, pinned and
# free; one process per CPU), then pagebench (the page's microbenchmarks).
#   OUT=... bash docs/results/<this directory>/run_d.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s36_d}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export SPREAD_PROCESSES=5
bash .bundle/gpu-run "$out" $(( ${BUDGET:-590} - 12 )) spread:170 pagebench
cat "$out/gpu-run.log"
