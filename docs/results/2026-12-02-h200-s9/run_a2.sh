#!/usr/bin/env bash
# GPU call a2 of 2026-12-02 s9: call a ran gpu-suite's bench part at its default
# --benchmark_min_time=0.1, where a replay covers less than one pass of the longer traces (its
# growth then dominates) and a serve point lasts 0.1 s; this repeats replay, limit/epoch_event and
# serve at BENCH_MIN_TIME=0.5, as earlier sessions measured them. Then pair/<variant>/4096 at one
# thread in 5 fresh processes with address randomisation off (setarch -R), pinned to CPU 2: the
# spread part's `pinned` runs with the layout fixed.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a2; mkdir -p $o/b1 $o/b2 $o/norand; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
S=.bundle/gpu-suite
BENCH_MIN_TIME=0.5 BENCH_FILTER='^(replay/(mutex|lockfree|tls|stream)(-tight)?/[a-z_0-9]+/real_time|replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/immediate/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$' \
  timeout 330 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_MIN_TIME=0.5 BENCH_FILTER='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub|tls-mr)/(small|mixed)/real_time/threads:(1|16|64)$' \
  timeout 170 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench.json $o/b1/bench.json $o/b2/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log > $o/bench.log; rm -rf $o/b1 $o/b2
export LD_LIBRARY_PATH=$PWD/.bundle/lib
for i in 1 2 3 4 5; do
  timeout 30 setarch -R taskset -c 2 .bundle/bin/bench --backend=cuda --traces= \
    --benchmark_filter='^(pair/(mutex|lockfree|tls|stream)/4096/real_time/threads:1|limit/stack/real_time/threads:1)$' \
    --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$o/norand/p$i.json --benchmark_out_format=json > /dev/null 2>&1
done; el norand rc=$?
tar czf $OUT/a2.tgz -C $OUT a2; el done
