#!/usr/bin/env bash
# s30 call 2 of 2, the same bundle as run_1.sh: replay (every trace, every variant and
# cudaMallocAsync in their own processes, two rounds), the page's microbenchmarks (pagebench), the
# small-class hot path against the pre-heap main's (pair_ab.sh, issue 14: pair/tls and pair/stream
# at 1 and 16 threads within 5%), then the spread (issue 15's five fresh processes alive at once
# first) with what is left. The soak, GPU tests, faults, sanitizer and peers of this library ran
# in s29 on the H100 (docs/results/2026-12-05-h100-s29); they are not repeated here.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export REPLAY_ROUNDS=2 SPREAD_PROCESSES=5
here=docs/results/2026-12-05-h100-s30
budget=${BUDGET:-580}
until=$(( $(date +%s) + budget ))
bash .bundle/gpu-run "$OUT" $(( budget - ${AB_SECONDS:-40} - ${SPREAD_SECONDS:-120} )) replay pagebench
mkdir -p "$OUT/pair_ab"
timeout "${AB_SECONDS:-40}" bash $here/pair_ab.sh "$OUT/pair_ab" .bundle .bundle_main > "$OUT/pair_ab/pair_ab.log" 2>&1
echo "pair_ab: exit $?" >> "$OUT/gpu-run.log"
tar -cJf "$OUT/pair_ab.tar.xz" -C "$OUT" pair_ab && rm -rf "$OUT/pair_ab"
bash .bundle/gpu-run "$OUT" $(( until - $(date +%s) )) spread:30
