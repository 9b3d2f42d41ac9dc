#!/usr/bin/env bash
# GPU call a of 2026-12-02 s9 (the final code's GPU-suite run, part 1 of 3): gpu-suite's bench part
# in two filters (replay, limit/epoch_event, pair, prodcons; then serve), each writing its own
# bench.json, merged into one (merge_bench.py); then gpu-suite's peers part (30 s per peer).
# Run from the repository root after .ci/gpu-bundle, with .bundle carried (test binaries left out
# of the bundle for the 64 MiB limit).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o/b1 $o/b2; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S=.bundle/gpu-suite
BENCH_FILTER='^(replay/(mutex|lockfree|tls|stream)(-tight)?/[a-z_0-9]+/real_time|replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/immediate/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time|(pair/[a-zA-Z]+/4096|prodcons/[a-zA-Z]+)/real_time/threads:[0-9]+)$' \
  timeout 260 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_FILTER='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub|tls-mr)/(small|mixed)/real_time/threads:(1|16|64)$' \
  timeout 250 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench.json $o/b1/bench.json $o/b2/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log > $o/bench.log; rm -rf $o/b1 $o/b2
PEER_SECONDS=30 timeout 90 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
tar czf $OUT/a.tgz -C $OUT a; el done
