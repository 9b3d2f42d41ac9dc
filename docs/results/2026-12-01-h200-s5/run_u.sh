#!/usr/bin/env bash
# GPU call U. (1) The stack sweep (bench/stack_sweep.hpp) against one placement: pair at 1 thread
# in 5 fresh processes each way (issue 15 item 7). (2) Hot paths, s3 code (33e276f) against this
# code, both with the sweep: pair at 1 and 16 threads, alternating, 2 rounds (issues 14 and 16).
# (3) The stream variant's partition donation: 60 s mixed soaks (64 threads, 16 streams) of
# stream without it (4b04d6a's stress) and with it, and mutex; serve/mixed at 16 threads, both.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/u; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
B=.bundle/bin; H=.bundle/head
el() { echo "$* $(( $(date +%s)-start ))s"; }
f1='^(pair/(mutex|lockfree|tls|stream)/4096/real_time/threads:1|pair_direct/tls/4096/real_time/threads:1|limit/stack/real_time/threads:1)$'
for i in 1 2 3 4 5; do for so in 64 1; do
  timeout 60 $B/bench --backend=cuda --traces= --stack-offsets=$so --benchmark_filter="$f1" --benchmark_repetitions=3 \
    --benchmark_min_time=0.1 --benchmark_report_aggregates_only=true --benchmark_out=$o/sweep${so}_$i.json --benchmark_out_format=json >/dev/null 2>&1
done; done; el sweep
f2='^pair/(mutex|lockfree|tls|stream)/4096/real_time/threads:(1|16)$'
for r in 1 2; do for b in head new; do
  bin=$B/bench; [ $b = head ] && bin=$H/bench
  timeout 90 $bin --backend=cuda --traces= --benchmark_filter="$f2" --benchmark_repetitions=5 --benchmark_min_time=0.1 \
    --benchmark_report_aggregates_only=true --benchmark_out=$o/hot_${b}_$r.json --benchmark_out_format=json >/dev/null 2>&1
  el hot $b $r rc=$?
done; done
for b in old new; do bin=$B/bench; [ $b = old ] && bin=$H/bench_4b04
  timeout 60 $bin --backend=cuda --traces= --benchmark_filter='^serve/(mutex|tls|stream)/mixed/real_time/threads:16$' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out=$o/serve_$b.json --benchmark_out_format=json >/dev/null 2>&1
  el serve $b rc=$?
done
timeout 90 $H/stress_4b04 --backend=cuda --variant=stream --sizes=mixed --duration=60 --quiet --seed=11 --json=$o/soak_stream_old.json > $o/soak_stream_old.txt 2>&1; el soak old rc=$?
timeout 90 $B/stress --backend=cuda --variant=stream --sizes=mixed --duration=60 --quiet --seed=11 --json=$o/soak_stream_new.json > $o/soak_stream_new.txt 2>&1; el soak new rc=$?
timeout 90 $B/stress --backend=cuda --variant=mutex --sizes=mixed --duration=60 --quiet --seed=11 --json=$o/soak_mutex_new.json > $o/soak_mutex_new.txt 2>&1; el soak mutex rc=$?
python3 - $o > $o/summary.txt <<'PY'
import json, sys, glob, statistics, collections, os
o = sys.argv[1]
def med(f):
  try: return {x['run_name']: x for x in json.load(open(f))['benchmarks'] if x.get('aggregate_name') == 'median'}
  except Exception as e: return {}
print('== sweep: per process median ns (offsets 64 | offsets 1)')
t = collections.defaultdict(lambda: collections.defaultdict(list))
for so in (64, 1):
  for i in range(1, 6):
    for n, x in med(f'{o}/sweep{so}_{i}.json').items(): t[n][so].append(x['real_time'])
for n in sorted(t):
  line = f'{n:48s}'
  for so in (64, 1):
    v = t[n][so]
    if v: line += f' | {so:2d}: ' + ' '.join(f'{x:6.2f}' for x in v) + f'  max/min {max(v)/min(v):.3f}'
  print(line)
for n, x in sorted(med(f'{o}/sweep64_1.json').items()):
  print(f'   {n:48s} fast {x.get("fast_ns",0):6.2f} slow {x.get("slow_ns",0):6.2f} slow_share {x.get("slow_share",0):.2f}')
print('== hot paths new/head (medians of round medians)')
h = collections.defaultdict(lambda: collections.defaultdict(list))
for b in ('head', 'new'):
  for r in (1, 2):
    for n, x in med(f'{o}/hot_{b}_{r}.json').items(): h[n][b].append(x['real_time'])
for n in sorted(h):
  if h[n]['head'] and h[n]['new']:
    a, b = statistics.median(h[n]['head']), statistics.median(h[n]['new'])
    print(f'{n:48s} head {a:7.2f} new {b:7.2f} new/head {b/a:.3f}  rounds {h[n]["head"]} {h[n]["new"]}')
print('== serve/mixed 16 threads (req/s, stream_waits/1k)')
for b in ('old', 'new'):
  for n, x in sorted(med(f'{o}/serve_{b}.json').items()):
    print(f'{b} {n:44s} {x.get("requests_per_second", x.get("items_per_second", 0)):10.0f} waits {x.get("stream_waits_per_1k_allocs", 0):.3f} failures {x.get("failures", 0)} MiB {x.get("reserved_MiB", 0)} per1k grows {x.get("grows_per_1k_allocs", -1):.3f} events {x.get("events_per_1k_allocs", -1):.2f} maps {x.get("maps_per_1k_allocs", -1):.3f} unmaps {x.get("unmaps_per_1k_allocs", -1):.3f}')
print('== soaks 60 s mixed')
for f in sorted(glob.glob(o + '/soak_*.json')):
  d = json.load(open(f)); p = d['pool_stats']; hp = p['heap']
  print(f"{os.path.basename(f):24s} live {d['peak_live_bytes']/2**30:.2f} reserved {d['peak_reserved_bytes']/2**30:.2f} GiB heap_used {hp['peak_used_bytes']/2**30:.2f} grows {p['grows']} events {p['events_recorded']} waits {p['stream_waits']} violations {d['violations']} ops {d['ops']}")
PY
cat $o/summary.txt; tar czf $OUT/u.tgz -C $OUT u
