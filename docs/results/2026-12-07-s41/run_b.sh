#!/usr/bin/env bash
# s41 call B (device), the same bundle: replay (every trace, the four variants and cudaMallocAsync in
# their own processes, 2 rounds), peers through stress, pagebench, the spread (five fresh processes
# per variant, pinned and free), then aslr_probe.sh (do the single-thread levels follow the
# layout?), each as far as the budget goes (gpu-run skips a part that no longer fits).
#   OUT=... BUDGET=... bash docs/results/2026-12-07-s41/run_b.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s41_b}
mkdir -p "$out"
here=$(dirname "$0")
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
start=$(date +%s)
export REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} SPREAD_PROCESSES=5
bash .bundle/gpu-run "$out" $(( ${BUDGET:-585} - 10 )) ${PARTS:-replay:320 peers:62 pagebench:57 spread:166}
# The probe in what is left (about 45 s for 8 processes of each mode and variant).
left=$(( ${BUDGET:-585} - 5 - ($(date +%s) - start) ))
(( left > 20 )) && timeout "$left" bash "$here/aslr_probe.sh" "$out" 8 .bundle/bin/bench > /dev/null 2>&1
cat "$out/gpu-run.log"
