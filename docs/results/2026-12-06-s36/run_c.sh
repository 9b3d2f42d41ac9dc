#!/usr/bin/env bash
# s36 call C (device), the same bundle: replay first (every trace, the four variants and
# cudaMallocAsync in their own processes, 2 rounds: s35 fitted one after serve), then pagebench and
# peers through stress.
#   OUT=... bash docs/results/<this directory>/run_c.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s36_c}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export REPLAY_ROUNDS=2
bash .bundle/gpu-run "$out" $(( ${BUDGET:-590} - 12 )) replay:330 pagebench peers
cat "$out/gpu-run.log"
