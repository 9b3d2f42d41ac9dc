#!/bin/bash
# usage: ab.sh OUTDIR ROUNDS THREADS(1|16) ; alternates base/new processes
out=$1; rounds=$2; thr=${3:-1}
mkdir -p $out
base=/work/wt-front-base/build/default/bench/bench
new=/work/wt-front/build/default/bench/bench
pin="taskset -c 1"; [ "$thr" != 1 ] && pin=""
for r in $(seq 1 $rounds); do
  for side in base new; do
    b=$base; [ $side = new ] && b=$new
    $pin $b --backend=sim --traces= --benchmark_filter="^pair/(tls|tls-arenas|stream|stream-arenas)/4096/real_time/threads:$thr\$" \
      --benchmark_min_time=0.3 --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_format=json > $out/$side.$r.json 2>/dev/null
  done
done
python3 - $out <<'PY'
import json,glob,sys,statistics as st
out=sys.argv[1]
res={}
for side in ('base','new'):
  for f in sorted(glob.glob(f'{out}/{side}.*.json')):
    for b in json.load(open(f))['benchmarks']:
      if b.get('aggregate_name')!='median': continue
      a=b['run_name'].split('/')[1]
      res.setdefault(side,{}).setdefault(a,[]).append(b['real_time'])
for side in ('base','new'):
  m={a:st.median(v) for a,v in res[side].items()}
  print(side, ' '.join(f'{a}={m[a]:.2f}ns(n={len(res[side][a])})' for a in sorted(m)),
        f"tls-arenas/tls={m['tls-arenas']/m['tls']:.3f} stream-arenas/stream={m['stream-arenas']/m['stream']:.3f}")
  for a in sorted(res[side]): print('   ',side,a,' '.join(f'{x:.2f}' for x in res[side][a]))
PY
