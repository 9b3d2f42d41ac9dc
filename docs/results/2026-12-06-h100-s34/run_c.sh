#!/usr/bin/env bash
# s34 call C (device), the same bundle: pagebench (the page's microbenchmarks), peers through
# stress, the sanitizer demos, the spread (issue 15's five fresh processes), serve (run_a.sh had no
# time left for it: skipped at 122 s left of its 125; as many rounds as fit), then s33's
# stack_offset.sh (tls's two levels against the main thread's stack offset; never run on a GPU
# host) with what time is left.
#   OUT=... bash docs/results/2026-12-06-gpu-s34/run_c.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s34_c}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
export SPREAD_PROCESSES=5 SERVE_ROUNDS=2
budget=${BUDGET:-420}
until=$(( $(date +%s) + budget ))
bash .bundle/gpu-run "$out" $(( budget - 25 )) pagebench peers sanitizer spread:140 serve
left=$(( until - $(date +%s) - 3 ))
if (( left > 20 )); then
  [ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
  timeout $left bash docs/results/2026-12-06-vm-s33/stack_offset.sh .bundle/bin/bench > "$out/stack_offset_tls.txt" 2>&1
  echo "stack_offset: exit $?" >> "$out/gpu-run.log"
fi
cat "$out/gpu-run.log"
