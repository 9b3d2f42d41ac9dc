#!/usr/bin/env bash
# s33 call B (device), the same bundle as run_a.sh: replay (every trace, the four variants and
# cudaMallocAsync in their own processes, two rounds), issue 14's hot-path check (s30's pair_ab.sh:
# pair/tls and pair/stream at 1 and 16 threads against the pre-heap main abb4709, .bundle_main),
# then the spread (issue 15's five fresh processes).
#   OUT=... bash docs/results/2026-12-06-h200-s33/run_b.sh   (carry .bundle, .bundle_main)
set -u
out=${OUT:-/tmp/s33_b}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export REPLAY_ROUNDS=2 SPREAD_PROCESSES=5
budget=${BUDGET:-575}
until=$(( $(date +%s) + budget ))
bash .bundle/gpu-run "$out" $(( budget - 40 - 160 )) replay
mkdir -p "$out/pair_ab"
timeout 40 bash docs/results/2026-12-05-h100-s30/pair_ab.sh "$out/pair_ab" .bundle .bundle_main > "$out/pair_ab/pair_ab.log" 2>&1
echo "pair_ab: exit $?" >> "$out/gpu-run.log"
tar -cJf "$out/pair_ab.tar.xz" -C "$out" pair_ab && rm -rf "$out/pair_ab"
bash .bundle/gpu-run "$out" $(( until - $(date +%s) )) spread:140
cat "$out/gpu-run.log"
