#!/usr/bin/env bash
# s39's call for what device time is left after run_h.sh (five failed machine starts cost 991 s of
# the session's 1,800): gpu-suite's replay part alone (every trace, the four variants and
# cudaMallocAsync in their own processes, 2 rounds), issue 14's replay targets with bf585fc's
# growth change, then serve (1 round) if the budget holds it.
#   OUT=... BUDGET=... bash docs/results/<this directory>/run_r.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s39_r}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export REPLAY_ROUNDS=2 SERVE_ROUNDS=1
bash .bundle/gpu-run "$out" $(( ${BUDGET:-590} - 12 )) replay:300 serve:125
cat "$out/gpu-run.log"
