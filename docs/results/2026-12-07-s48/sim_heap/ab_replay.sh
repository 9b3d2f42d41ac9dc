#!/bin/bash
# alternating base/new processes, pinned to CPU 1, replay of mlp_4stream and lm_train
out=/tmp/abh; rounds=${1:-6}
base=/tmp/bt/bin/bench; new=/work/main/build/gpu/bench/bench
mkdir -p $out/t; cp /work/main/traces/*.csv $out/t/
for r in $(seq 1 $rounds); do
  for side in base new; do
    b=$base; [ $side = new ] && b=$new
    LD_LIBRARY_PATH=/tmp/bt/lib taskset -c 1 $b --backend=sim --traces=$out/t --benchmark_filter='^replay/(mutex|lockfree|mutex-arenas|lockfree-arenas|tls-arenas)/(mlp_4stream|lm_train)/real_time$' \
      --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_format=json > $out/$side.$r.json 2>$out/$side.$r.err
  done
done
python3 - $out <<'PY'
import json,glob,sys,statistics as st
out=sys.argv[1]
res={}
for side in ('base','new'):
  for f in sorted(glob.glob(f'{out}/{side}.*.json')):
    r=int(f.split('.')[-2])
    for b in json.load(open(f))['benchmarks']:
      if b.get('aggregate_name')!='median': continue
      res.setdefault(b['run_name'],{}).setdefault(side,{})[r]=(b['real_time'], b.get('reserved_over_live'))
for name in sorted(res):
  d=res[name]; rounds=sorted(set(d['base'])&set(d['new']))
  ratios=[d['new'][r][0]/d['base'][r][0] for r in rounds]
  print(f"{name}: base {st.median(d['base'][r][0] for r in rounds):.1f} ns, new {st.median(d['new'][r][0] for r in rounds):.1f} ns, new/base median {st.median(ratios):.3f} ({' '.join(f'{x:.3f}' for x in ratios)}); reserved/live base {d['base'][rounds[0]][1]} new {d['new'][rounds[0]][1]}")
PY
