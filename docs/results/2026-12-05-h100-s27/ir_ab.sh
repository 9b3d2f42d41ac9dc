#!/bin/bash
# usage: irab.sh BENCH OUT ; lockfree/mutex/tls/stream x lm_infer_varseq, mlp_4stream, cnn_varbatch; elided; passes 1 and 3
bench=$1 out=$2; mkdir -p $out; : > $out/ir.txt
for n in lm_infer_varseq mlp_4stream cnn_varbatch; do for v in mutex lockfree tls stream; do
  for p in 1 3; do
    valgrind --tool=callgrind --toggle-collect='bench::(anonymous namespace)::replay*' --callgrind-out-file=$out/$v.$n.$p.out $bench --backend=sim --traces= --trace=traces/$n.csv --benchmark_filter="replay/$v/$n/elided/" --replay-passes=$p --benchmark_format=json 2>/dev/null > $out/$v.$n.$p.json
  done
  python3 - $out $v $n >> $out/ir.txt <<'P'
import json, subprocess, sys
out, v, n = sys.argv[1:]
def get(p):
    b = json.load(open(f"{out}/{v}.{n}.{p}.json"))['benchmarks'][0]
    a = subprocess.run(['callgrind_annotate', f"{out}/{v}.{n}.{p}.out"], capture_output=True, text=True).stdout
    ir = next(int(l.split()[0].replace(',', '')) for l in a.splitlines() if 'PROGRAM TOTALS' in l)
    return b['iterations'], ir, b
(i1, r1, _), (i2, r2, b) = get(1), get(3)
print(f"{v} {n} {(r2 - r1) / (i2 - i1):.1f} {b.get('reserved_over_live', 0):.4f} {1000 * b.get('events_per_op', 0):.2f}")
P
done; done
