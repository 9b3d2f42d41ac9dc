#!/usr/bin/env bash
# GPU call a of 2026-12-02 s10 (the final code's GPU-suite run, part 1 of 3), from the repository
# root after .ci/gpu-bundle with .bundle carried (test binaries, sanitizer demos and the PyTorch
# library left out for the 64 MiB limit). gpu-suite's bench part in three filters, each writing its
# own bench.json, merged into one (s9's merge_bench.py): pair/4096 and prodcons at the suite's 0.1 s;
# replay (stream-ordered, immediate, the -tight labels, cudaMallocAsync) and limit/epoch_event at
# BENCH_MIN_TIME=0.5 (s9: at 0.1 s a replay covers less than one pass); serve at 0.5 with the
# repetitions in random order (BENCH_INTERLEAVE=1: s9's serve/mixed order of mutex, lockfree and tls
# moved 5-12% between runs). Then gpu-suite's peers part (30 s per peer).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S=.bundle/gpu-suite
BENCH_FILTER='^(pair/[a-zA-Z]+/4096|prodcons/[a-zA-Z]+)/real_time/threads:[0-9]+$' \
  timeout 120 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_MIN_TIME=0.5 BENCH_FILTER='^(replay/(mutex|lockfree|tls|stream)(-tight)?/[a-z_0-9]+/real_time|replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/immediate/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$' \
  timeout 220 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
BENCH_MIN_TIME=0.5 BENCH_INTERLEAVE=1 BENCH_FILTER='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub|tls-mr)/(small|mixed)/real_time/threads:(1|16|64)$' \
  timeout 150 bash $S $o/b3 bench > /dev/null 2>&1; el bench3 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench.json $o/b1/bench.json $o/b2/bench.json $o/b3/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log $o/b3/bench.log > $o/bench.log; rm -rf $o/b1 $o/b2 $o/b3
PEER_SECONDS=30 timeout 90 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
tar czf $OUT/a.tgz -C $OUT a; el done
