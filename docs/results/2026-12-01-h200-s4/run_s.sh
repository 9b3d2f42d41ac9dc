#!/usr/bin/env bash
# GPU call S (issue 16: the hot paths unchanged by the model refactor): pair/<variant>/4096 at 1
# and 16 threads and prodcons/<variant>, the s3 code (.bundle/head/bench) against the merged code,
# alternating, two rounds, in one call.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/s; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
f='^(pair/(mutex|lockfree|tls|stream)/4096/real_time/threads:(1|16)|prodcons/(mutex|lockfree|tls|stream)/.*)$'
for round in 1 2; do for b in head new; do
  bin=.bundle/bin/bench; [ $b = head ] && bin=.bundle/head/bench
  timeout 60 $bin --backend=cuda --traces= --benchmark_filter="$f" --benchmark_repetitions=5 --benchmark_min_time=0.05 \
    --benchmark_report_aggregates_only=true --benchmark_out=$o/hot_${b}_$round.json --benchmark_out_format=json > /dev/null 2>&1
  echo "$b round $round rc=$? $(( $(date +%s)-start ))s"
done; done
python3 - $o <<'PY'
import json, sys, collections, statistics
o = sys.argv[1]; t = collections.defaultdict(lambda: collections.defaultdict(list))
for b in ('head', 'new'):
  for r in (1, 2):
    for x in json.load(open(f'{o}/hot_{b}_{r}.json'))['benchmarks']:
      if x['name'].endswith('_median'): t[x['name'].replace('_median', '')][b].append(x['real_time'])
for n in sorted(t):
  h = statistics.median(t[n]['head']); w = statistics.median(t[n]['new'])
  print(f'{n:60s} head {h:9.2f} ns  new {w:9.2f} ns  new/head {w/h:.3f}   rounds {t[n]["head"]} {t[n]["new"]}')
PY
tar czf $OUT/s.tgz -C $OUT s
