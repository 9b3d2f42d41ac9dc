#!/usr/bin/env bash
# GPU call G: pair and prodcons, this code (the atomics policy of issue 16 merged) against main's
# (abb4709) bench, alternating twice in one run, medians of 5.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/g; mkdir -p $o; export LD_LIBRARY_PATH=$PWD/.bundle/lib
f='^pair/(mutex|lockfree|tls|stream)/4096/real_time/threads:(1|16)$|^prodcons/(mutex|lockfree|tls|stream)/real_time/threads:16$'
for round in 1 2; do for b in bench bench_main; do
  timeout 120 .bundle/bin/$b --backend=cuda --traces= --benchmark_filter="$f" --benchmark_repetitions=5 --benchmark_min_time=0.1 \
    --benchmark_report_aggregates_only=true --benchmark_out=$o/${b}_$round.json --benchmark_out_format=json > /dev/null 2>&1; echo "$b $round rc=$?"
done; done
for f in $o/*.json; do python3 -c "
import json; d=json.load(open('$f'))
for b in d['benchmarks']:
  if b['name'].endswith('_median'): print('$(basename $f .json)', b['name'].replace('/real_time',''), round(b['real_time'],2), round(b.get('items_per_second',0)/1e6,1),'M/s')"; done
