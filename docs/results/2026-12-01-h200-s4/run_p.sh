#!/usr/bin/env bash
# GPU call P: after call O showed stream-ordered replay regressing on one-stream traces, the heap
# resolves completed epochs at the next allocation and places a request in the smallest hole as one
# piece or a run (place()). Replay of every trace, stream-ordered: the s3 code (head), this code
# (new), and this code with one stream's ranges merged under the later epoch (MERGE_EPOCHS=1,
# new-merge); then the 2-minute mixed soak of every variant with MERGE_EPOCHS=1 (call O has it without).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/p; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
f='^replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/real_time$'
for b in head new new-merge; do
  bin=.bundle/bin/bench; [ $b = head ] && bin=.bundle/head/bench
  env $([ $b = new-merge ] && echo MERGE_EPOCHS=1 || echo X=1) timeout 150 $bin --backend=cuda --traces=.bundle/traces --benchmark_filter="$f" --benchmark_repetitions=3 --benchmark_min_time=0.1 \
    --benchmark_report_aggregates_only=true --benchmark_out=$o/replay_$b.json --benchmark_out_format=json > /dev/null 2>&1
  echo "replay $b rc=$? $(( $(date +%s)-start ))s"
done
MERGE_EPOCHS=1 SOAK_SECONDS=120 SOAK_SIZES=mixed timeout 170 bash .bundle/gpu-suite $o soak > /dev/null 2>&1; echo "soak rc=$? $(( $(date +%s)-start ))s"
for f in $o/stress_*.json; do python3 -c "
import json; d=json.load(open('$f'))
print('$(basename $f .json)', d.get('variant') or d.get('allocator'), 'live %.2f GiB' % (d['peak_live_bytes']/2**30), 'reserved %.2f GiB' % ((d.get('peak_reserved_bytes') or 0)/2**30), 'ops/s', d['ops_per_second'], 'violations', d['violations'])"; done
python3 - $o <<'PY'
import json, sys, collections
o = sys.argv[1]; rows = collections.defaultdict(dict)
for b in ('head', 'new', 'new-merge'):
  for x in json.load(open(f'{o}/replay_{b}.json'))['benchmarks']:
    if not x['name'].endswith('_median'): continue
    rows[x['name'].replace('/real_time_median', '')][b] = (x['real_time'], x.get('reserved_over_live', 0))
for n in sorted(rows):
  print(f'{n:45s}', '  '.join(f"{b} {rows[n].get(b,(0,0))[0]:7.1f} ns {rows[n].get(b,(0,0))[1]:.3f}" for b in ('head','new','new-merge')))
PY
tar czf $OUT/p.tgz -C $OUT p
