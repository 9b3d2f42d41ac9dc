#!/usr/bin/env bash
# GPU call K (the final code): the GPU tests; one bench run of replay (every variant, tls/stream
# with remap_ratio 1.05, the peers), serve (with its no-allocator ceiling), pair/4096 scaling and
# prodcons; pair/tls and pair/stream with slabs doubling from 64 KiB against whole 2 MiB slabs and
# against the pre-heap main's bench (abb4709), alternating.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/k; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
FAULT_SECONDS=2 timeout 120 bash .bundle/gpu-suite $o tests > /dev/null 2>&1; echo "tests rc=$? $(( $(date +%s)-start ))s"
BENCH_FILTER='^(replay/(mutex|lockfree|tls|stream|tls-remap|stream-remap|cudaMallocAsync|cub)/|serve/|pair/(mutex|lockfree|tls|stream|cudaMallocAsync|cub)/4096/|prodcons/(mutex|lockfree|tls|stream|cudaMallocAsync|cub)/)' \
  BENCH_REPS=3 timeout 300 bash .bundle/gpu-suite $o bench > /dev/null 2>&1; echo "bench rc=$? $(( $(date +%s)-start ))s"
for round in 1 2; do
  timeout 40 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^pair/(tls|stream|tls-slab2m|stream-slab2m)/4096/real_time/threads:(1|16)$' \
    --benchmark_repetitions=5 --benchmark_min_time=0.05 --benchmark_report_aggregates_only=true --benchmark_out=$o/pair_ab_$round.json --benchmark_out_format=json > /dev/null 2>&1
  timeout 30 .bundle/bin/bench_main --backend=cuda --traces= --benchmark_filter='^pair/(tls|stream)/4096/real_time/threads:(1|16)$' \
    --benchmark_repetitions=5 --benchmark_min_time=0.05 --benchmark_report_aggregates_only=true --benchmark_out=$o/pair_main_$round.json --benchmark_out_format=json > /dev/null 2>&1
done; echo "pair rc=$? $(( $(date +%s)-start ))s"
grep -E "PASSED|FAILED|inject=" $o/tests.log | sort | uniq -c | head -30
grep median $o/bench.log | sed 's/real_time_median//' | awk '{print $1, $2, $3, $NF}' | grep -E "replay|serve" | cut -c1-150
for f in $o/pair_*.json; do python3 -c "
import json; d=json.load(open('$f'))
for b in d['benchmarks']:
  if b['name'].endswith('_median'): print('$(basename $f .json)', b['name'].replace('/real_time',''), round(b['real_time'],2), round(b.get('items_per_second',0)/1e6,1),'M/s')"; done
tar czf $OUT/k.tgz -C $OUT k
