#!/usr/bin/env bash
# GPU call a of 2026-12-03 s16 (the final code's GPU-suite run, part 1 of 3), from the repository
# root after .ci/gpu-bundle with .bundle carried (bins gzipped, gunzipped first). s13's run_a.sh
# without its spread check, plus the ceiling and two A/B checks:
#  - gpu-suite's bench part in three filters merged by s9's merge_bench.py: pair/4096 and prodcons at
#    the suite's 0.1 s; replay (stream-ordered, elided, immediate, the -tight labels,
#    cudaMallocAsync), limit/epoch_event and limit/stack at BENCH_MIN_TIME=0.5; serve (the pools,
#    tls-mr, cudaMallocAsync, cub and serve/none, the ceiling: no allocator) at 0.5 with
#    BENCH_INTERLEAVE=1. Then gpu-suite's peers part (20 s per peer).
#  - ab/: serve/stream/mixed at 16 and 64 threads, the bench of 448f370 (every busy partition asked,
#    .bundle/bench_base) against this one (at most two asked per miss), 3 rounds alternating, each
#    process 3 x 0.5 s.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S=.bundle/gpu-suite
BENCH_FILTER='^(pair/[a-zA-Z]+/4096|prodcons/[a-zA-Z]+)/real_time/threads:[0-9]+$' \
  timeout 100 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_MIN_TIME=0.5 BENCH_FILTER='^(replay/(mutex|lockfree|tls|stream)(-tight)?/[a-z_0-9]+/real_time|replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/(elided|immediate)/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time|limit/stack/real_time/threads:1)$' \
  timeout 270 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
BENCH_MIN_TIME=0.5 BENCH_INTERLEAVE=1 BENCH_FILTER='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub|tls-mr|none)/(small|mixed)/real_time/threads:(1|16|64)$' \
  timeout 160 bash $S $o/b3 bench > /dev/null 2>&1; el bench3 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench.json $o/b1/bench.json $o/b2/bench.json $o/b3/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log $o/b3/bench.log > $o/bench.log; rm -rf $o/b1 $o/b2 $o/b3
PEER_SECONDS=20 timeout 70 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
export LD_LIBRARY_PATH=$PWD/.bundle/lib; mkdir -p $o/ab
for r in 1 2 3; do
  for b in base new; do
    bin=.bundle/bin/bench; [ $b = base ] && bin=.bundle/bench_base
    timeout 40 $bin --backend=cuda --traces= --benchmark_filter='^serve/stream/mixed/real_time/threads:(16|64)$' \
      --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out=$o/ab/serve_${b}_r$r.json --benchmark_out_format=json > /dev/null 2> $o/ab/serve_${b}_r$r.err
  done
done; el ab
tar czf $OUT/a.tgz -C $OUT a; el done
