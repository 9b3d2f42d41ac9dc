#!/usr/bin/env bash
# s35 call C (device), the same bundle: serve (2 rounds: every variant, the peers, the no-allocator
# ceiling) and replay (every trace, the four variants and cudaMallocAsync in their own processes,
# 2 rounds), for docs/results.md.
#   OUT=... bash docs/results/2026-12-06-h100-s35/run_c.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s35_c}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
export SERVE_ROUNDS=2 REPLAY_ROUNDS=2
bash .bundle/gpu-run "$out" $(( ${BUDGET:-590} - 12 )) serve:230 replay:300
cat "$out/gpu-run.log"
