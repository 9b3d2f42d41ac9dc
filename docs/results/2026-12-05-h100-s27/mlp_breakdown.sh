#!/bin/bash
# Where a stream-ordered replay of mlp_4stream spends its host work, against the same replay with
# immediate frees: callgrind with its branch and cache simulation, instructions (Ir) and
# mispredicted conditional branches (Bcm) per replayed operation, by function (self cost), from
# the difference of a 1-pass and a 3-pass run (bench --replay-passes), so set-up and the first
# pass's growth cancel out. Usage (repository root): mlp_breakdown.sh BENCH OUT [VARIANT] [TRACE]
set -eu
bench=$1 out=$2 v=${3:-lockfree} t=${4:-mlp_4stream}
here=$(dirname "$0")
mkdir -p "$out"
for mode in elided immediate; do
  for p in 1 3; do
    valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
      --toggle-collect='bench::(anonymous namespace)::replay*' --callgrind-out-file="$out/$mode.$p.out" \
      "$bench" --backend=sim --traces= --trace=traces/$t.csv --benchmark_filter="replay/$v/$t/$mode/" \
      --replay-passes=$p --benchmark_format=json 2>/dev/null > "$out/$mode.$p.json"
  done
  ops=$(python3 -c "import json,sys; i=[json.load(open(f'$out/$mode.{p}.json'))['benchmarks'][0]['iterations'] for p in (1,3)]; print(i[1]-i[0])")
  echo "== $v $t $mode: $ops operations between the runs"
  python3 "$here/ir_self.py" "$out/$mode.1.out" "$out/$mode.3.out" "$ops" 30
done
