#!/usr/bin/env bash
# GPU call a of 2026-12-03 s17 (the final code's GPU-suite run, part 1 of 4), from the repository
# root after .ci/gpu-bundle with .bundle carried (bins gzipped, gunzipped first): gpu-suite's bench
# part in two filters (pair/4096 and prodcons at the suite's 0.1 s; replay stream-ordered, elided,
# immediate, the -tight labels, cudaMallocAsync, limit/epoch_event and limit/stack at
# BENCH_MIN_TIME=0.5), its peers part (20 s per peer) and its spread part. serve is call d's.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S=.bundle/gpu-suite
BENCH_FILTER='^(pair/[a-zA-Z]+/4096|prodcons/[a-zA-Z]+)/real_time/threads:[0-9]+$' \
  timeout 100 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_MIN_TIME=0.5 BENCH_FILTER='^(replay/(mutex|lockfree|tls|stream)(-tight)?/[a-z_0-9]+/real_time|replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/(elided|immediate)/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time|limit/stack/real_time/threads:1)$' \
  timeout 280 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench_a.json $o/b1/bench.json $o/b2/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log > $o/bench_a.log; rm -rf $o/b1 $o/b2
PEER_SECONDS=20 timeout 70 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
timeout 150 bash $S $o spread > /dev/null 2>&1; el spread rc=$?
tail -16 $o/spread.log
tar czf $OUT/a.tgz -C $OUT a; el done
