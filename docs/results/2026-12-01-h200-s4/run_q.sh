#!/usr/bin/env bash
# GPU call Q: the GPU tests; the heap as committed in this call (one-stream merging, the multi-stream rule, growth merging only what the caller may use) against the code before them (the s3 bundle, run
# k/n's binaries, carried as .bundle/head/): the 2-minute mixed soak of every variant side by side
# (as call J), a 60 s mixed soak over cudaMallocAsync for reference, and replay (every trace,
# stream-ordered and immediate, every variant and cudaMallocAsync), old and new alternating.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/q; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
FAULT_SECONDS=2 timeout 110 bash .bundle/gpu-suite $o tests > /dev/null 2>&1; echo "tests rc=$? $(( $(date +%s)-start ))s"
SOAK_SECONDS=120 SOAK_SIZES=mixed timeout 170 bash .bundle/gpu-suite $o soak > /dev/null 2>&1; echo "soak rc=$? $(( $(date +%s)-start ))s"
timeout 90 .bundle/bin/stress --backend=cuda --allocator=cudaMallocAsync --threads=64 --streams=16 --duration=60 --cross-stream=0.3 \
  --sizes=mixed --quiet --json=$o/stress_peer_cudaMallocAsync_mixed.json > $o/peer_mixed.txt 2>&1; echo "peer rc=$? $(( $(date +%s)-start ))s"
f='^replay/(mutex|lockfree|tls|stream|cudaMallocAsync)/'
for b in head new; do
  bin=.bundle/bin/bench; [ $b = head ] && bin=.bundle/head/bench
  timeout 200 $bin --backend=cuda --traces=.bundle/traces --benchmark_filter="$f" --benchmark_repetitions=3 --benchmark_min_time=0.1 \
    --benchmark_report_aggregates_only=true --benchmark_out=$o/replay_$b.json --benchmark_out_format=json > /dev/null 2>&1
  echo "replay $b rc=$? $(( $(date +%s)-start ))s"
done
for f in $o/stress_*.json; do python3 -c "
import json; d=json.load(open('$f'))
print('$(basename $f .json)', d.get('variant') or d.get('allocator'), 'live %.2f GiB' % (d['peak_live_bytes']/2**30), 'reserved %.2f GiB' % ((d.get('peak_reserved_bytes') or 0)/2**30), 'ops/s', d['ops_per_second'], 'violations', d['violations'])"; done
python3 - $o <<'PY'
import json, sys, collections
o = sys.argv[1]; rows = collections.defaultdict(dict)
for b in ('head', 'new'):
  for x in json.load(open(f'{o}/replay_{b}.json'))['benchmarks']:
    if not x['name'].endswith('_median'): continue
    n = x['name'].replace('/real_time_median', '')
    rows[n][b] = (x['real_time'], x.get('reserved_over_live', 0), x.get('floor_over_live', 0))
for n in sorted(rows):
  h = rows[n].get('head', (0, 0, 0)); w = rows[n].get('new', (0, 0, 0))
  print(f'{n:55s} ns/op {h[0]:8.1f} -> {w[0]:8.1f}   reserved/live {h[1]:.3f} -> {w[1]:.3f}  floor {w[2]:.3f}')
PY
grep -E "PASSED|FAILED" $o/tests.log | sort | uniq -c | head -20
tar czf $OUT/q.tgz -C $OUT q
