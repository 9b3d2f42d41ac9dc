#!/usr/bin/env bash
# GPU call c of 2026-12-01 s6, code 5b6da3c plus the epoch-close counters (the pools' behaviour
# unchanged): replay, stream-ordered, the four pools and cudaMallocAsync, every trace, 3
# repetitions, with why each epoch closed; gpu-suite's tests part (every test binary
# of the bundle but multi_gpu_test, left out for the 64 MiB limit: on one GPU it only skips; the
# injected faults, 10 s each), a 60 s mixed-size soak of the four variants side by side (64 threads,
# 16 streams), the peers through stress (20 s each), and the pair/4096 and prodcons benchmarks of
# the four variants and the peers (3 repetitions).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s); S=.bundle/gpu-suite
# Call c ran without this line, so its replay step failed (rc 127); call c2 ran that step with it.
export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
timeout 90 .bundle/bin/bench --backend=cuda --traces=.bundle/traces --benchmark_filter='^(replay/(mutex|lockfree|tls|stream|cudaMallocAsync)/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out=$o/replay.json --benchmark_out_format=json > /dev/null 2>$o/replay.err; el replay rc=$?
timeout 160 bash $S $o tests > /dev/null 2>&1; el tests rc=$?
SOAK_SECONDS=60 SOAK_SIZES=mixed timeout 100 bash $S $o soak > /dev/null 2>&1; el soak rc=$?
PEER_SECONDS=20 timeout 80 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
BENCH_FILTER='^(pair/(mutex|lockfree|tls|stream|cudaMallocAsync|cub)/4096|prodcons/(mutex|lockfree|tls|stream|cudaMallocAsync|cub))/real_time/threads:[0-9]+$' \
  timeout 130 bash $S $o bench > /dev/null 2>&1; el bench rc=$?
grep -hE 'FAILED|exit=|soak variant|violations' $o/tests.log $o/soak.log $o/peers.log | head -40
tar czf $OUT/c.tgz -C $OUT c; el done
