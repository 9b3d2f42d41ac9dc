#!/usr/bin/env bash
# GPU call W. (1) The stream and tls pools' CUDA tests (the donation, the admission change).
# (2) PyTorch workloads.py: device memory and step time, torch-expandable against the plug-in with
# its largest class at 1 MiB (the default), 256 KiB and 64 KiB (CUDAPOOL_MAX_CLASS_BYTES), tls and
# stream. (3) Replay, stream-ordered, every trace: mutex, tls, stream, cudaMallocAsync.
# (4) serve_devices on this one GPU (devices:1), and its injected-fault check.
# PARTS (default "tests torch replay serve"): the parts to run. Call w ran all four; its torch part
# failed (train_compare.py was not carried) and its replay filter matched nothing; call w2 reran
# PARTS="torch replay" with both fixed.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PARTS=${PARTS:-tests torch replay serve}; has() { [[ " $PARTS " == *" $1 "* ]]; }
o=$OUT/${CALL:-w}; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; el() { echo "$* $(( $(date +%s)-start ))s"; }
has tests && for t in stream_pool_test tls_pool_test; do
  timeout 120 $B/$t --gtest_brief=1 > $o/$t.log 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $o/$t.log | tr '\n' ' ')"
done; el tests
py=python3; W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so; runs=()
if has torch; then
$py $W --allocator=torch-expandable --steps=40 --out=$o/wl_expandable.json > $o/torch.log 2>&1; runs+=($o/wl_expandable.json); el torch-expandable
$py $W --allocator=torch --steps=40 --out=$o/wl_torch.json >> $o/torch.log 2>&1; runs+=($o/wl_torch.json); el torch
for v in tls stream; do for m in "" 256k 64k; do
  tag=$v${m:+-$m}
  CUDAPOOL_STATS=$o/stats_$tag.json $py $W --allocator=cudapool --lib=$L --variant=$v ${m:+--max-class-bytes=$m} --steps=40 \
    --out=$o/wl_$tag.json >> $o/torch.log 2>&1; runs+=($o/wl_$tag.json); el cudapool $tag
done; done
$py $W --summary "${runs[@]}" --out=$o/workloads.json >> $o/torch.log 2>&1
fi
has replay && timeout 200 $B/bench --backend=cuda --traces=.bundle/traces --benchmark_filter='^replay/(mutex|tls|stream|cudaMallocAsync)/[a-z_0-9]+/real_time$' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out=$o/replay.json --benchmark_out_format=json > /dev/null 2>$o/replay.err; el replay rc=$?
if has serve; then
timeout 120 $B/bench --backend=cuda --traces= --benchmark_filter='^serve_devices/(mutex|tls|stream|cudaMallocAsync|cub)/(small|mixed)/devices:1/real_time/threads:(4|16)$' \
  --benchmark_out=$o/serve_devices.json --benchmark_out_format=json > /dev/null 2>$o/serve_devices.err; el serve_devices rc=$?
timeout 60 $B/bench --backend=cuda --traces= --serve-check-fault=100 --benchmark_filter='^serve_devices/mutex/small/devices:1/real_time/threads:4$' \
  > $o/serve_fault.txt 2>&1; echo "fault check rc=$? (1 expected)"; grep -i "failed device checks" $o/serve_fault.txt | head -2
fi
python3 - $o > $o/summary.txt <<'PY'
import json, sys
o = sys.argv[1]
try:
  print(json.load(open(f'{o}/workloads.json'))['markdown'])
except Exception as e: print('workloads', e)
for tag in ('tls', 'tls-256k', 'tls-64k', 'stream', 'stream-256k', 'stream-64k'):
  try:
    st = json.load(open(f'{o}/stats_{tag}.json'))['devices'][0]['stats']; h = st['heap']
    print(f"{tag:12s} peak mapped {h['peak_mapped_bytes']/2**20:8.1f} MiB  peak used {h['peak_used_bytes']/2**20:8.1f}  peak in use {st['peak_in_use_bytes']/2**20:8.1f}  slab {h['slab_bytes']/2**20:6.1f} at exit, maps {h['maps']} grows {st['grows']}")
  except Exception as e: print(tag, 'stats', e)
try:
  for x in json.load(open(f'{o}/replay.json'))['benchmarks']:
    if x.get('aggregate_name') == 'median':
      print(f"{x['run_name']:50s} {x['real_time']:9.1f} ns/op  reserved/live {x.get('reserved_over_live', 0):.3f}")
except Exception as e: print('replay', e)
try:
  for x in json.load(open(f'{o}/serve_devices.json'))['benchmarks']:
    print(f"{x['name']:60s} {x.get('items_per_second', 0):10.0f} req/s failures {x.get('failures', 0)} waits {x.get('stream_waits_per_1k_allocs', 0)}")
except Exception as e: print('serve_devices', e)
PY
cat $o/summary.txt; tar czf $OUT/${CALL:-w}.tgz -C $OUT ${CALL:-w}
