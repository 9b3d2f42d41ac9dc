#!/usr/bin/env bash
# s36 call D (device), the same bundle: serve (2 rounds: every variant, the peers, the no-allocator
# ceiling), then the spread (issue 15's five fresh processes, pinned and free; one process per CPU).
#   OUT=... bash docs/results/<this directory>/run_d.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s36_d}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export SERVE_ROUNDS=2 SPREAD_PROCESSES=5
bash .bundle/gpu-run "$out" $(( ${BUDGET:-590} - 12 )) serve:230 spread:170
cat "$out/gpu-run.log"
