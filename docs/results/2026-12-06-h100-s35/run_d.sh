#!/usr/bin/env bash
# s35 call D (device), the same bundle: pagebench (the page's microbenchmarks), peers through
# stress, the spread (issue 15's five fresh processes, pinned and free; one process per CPU).
#   OUT=... bash docs/results/2026-12-06-h100-s35/run_d.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s35_d}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
export SPREAD_PROCESSES=5
bash .bundle/gpu-run "$out" $(( ${BUDGET:-400} - 15 )) pagebench peers spread:170
cat "$out/gpu-run.log"
