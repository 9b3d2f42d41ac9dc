#!/usr/bin/env bash
# GPU call H: the GPU tests (query_stream and the stream policy on CUDA), replay of every trace for
# every variant (and tls/stream with remap_ratio 1.05) beside the peers; pair/tls and pair/stream
# at 1 and 16 threads, this code's bench and the pre-heap main's (abb4709) alternating.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/h; mkdir -p $o; start=$(date +%s)
FAULT_SECONDS=2 timeout 170 bash .bundle/gpu-suite $o tests > /dev/null 2>&1; echo "tests rc=$? $(( $(date +%s)-start ))s"
BENCH_FILTER='^replay/(mutex|lockfree|tls|stream|tls-remap|stream-remap|cudaMallocAsync|cub)/' BENCH_REPS=3 timeout 230 bash .bundle/gpu-suite $o bench > /dev/null 2>&1; echo "bench rc=$? $(( $(date +%s)-start ))s"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
for round in 1 2; do for b in bench bench_main; do
  timeout 40 .bundle/bin/$b --backend=cuda --traces= --benchmark_filter='^pair/(tls|stream)/4096/real_time/threads:(1|16)$' \
    --benchmark_repetitions=5 --benchmark_min_time=0.05 --benchmark_report_aggregates_only=true \
    --benchmark_out=$o/pair_${b}_$round.json --benchmark_out_format=json > /dev/null 2>&1
done; done; echo "pair rc=$? $(( $(date +%s)-start ))s"
grep -E "PASSED|FAILED|inject=" $o/tests.log | sort | uniq -c | head -20
grep median $o/bench.log | sed 's/real_time_median//' | awk '{print $1, $2, $3, $NF}' | cut -c1-160
for f in $o/pair_*.json; do python3 -c "
import json,sys; d=json.load(open('$f'))
for b in d['benchmarks']:
  if b['name'].endswith('_median'): print('$(basename $f)', b['name'], round(b['real_time'],2), b['time_unit'], round(b.get('items_per_second',0)/1e6,1),'M/s')"; done
tar czf $OUT/h.tgz -C $OUT h
