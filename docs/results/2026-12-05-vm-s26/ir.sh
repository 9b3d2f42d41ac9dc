#!/bin/bash
# Instructions per replayed operation under callgrind, exact and the same in every process: each
# replay runs whole passes of its trace (bench --replay-passes), once with P1 and once with P2
# passes, and the difference of the two counts is divided by the difference of the operations.
# Set-up, growth of the first pass and tear-down cancel out. Only the replay function is counted
# (callgrind's --toggle-collect), not the trace's loading.
#
# Usage (from the repository root): ir.sh BENCH OUT_DIR [MODE] [P1 P2]
#   BENCH  a Release build of bench (the default preset; -g only for line-level annotation)
#   MODE   elided (default), immediate or ordered (on the sim: its events)
# Writes OUT_DIR/ir.txt: one line per variant x trace, Ir/op, reserved/live and events per 1000
# operations of the P2 run; and the callgrind files.
set -eu
bench=$1 out=$2 mode=${3:-elided} p1=${4:-1} p2=${5:-4}
mkdir -p "$out"
: > "$out/ir.txt"
for t in traces/*.csv ../shared/traces/transformer_lm_train.csv; do
  n=$(basename "$t" .csv)
  for v in mutex lockfree tls stream; do
    f="replay/$v/$n/$mode/"
    [ "$mode" = ordered ] && f="replay/$v/$n/real_time"
    for p in $p1 $p2; do
      valgrind --tool=callgrind --toggle-collect='bench::(anonymous namespace)::replay*' \
        --callgrind-out-file="$out/$v.$n.$p.out" "$bench" --backend=sim --traces= --trace="$t" \
        --benchmark_filter="$f" --replay-passes=$p --benchmark_format=json 2>/dev/null > "$out/$v.$n.$p.json"
    done
    python3 - "$out" "$v" "$n" "$p1" "$p2" >> "$out/ir.txt" <<'P'
import json, subprocess, sys
out, v, n, p1, p2 = sys.argv[1:]
def get(p):
    b = json.load(open(f"{out}/{v}.{n}.{p}.json"))['benchmarks'][0]
    a = subprocess.run(['callgrind_annotate', f"{out}/{v}.{n}.{p}.out"], capture_output=True, text=True).stdout
    ir = next(int(l.split()[0].replace(',', '')) for l in a.splitlines() if 'PROGRAM TOTALS' in l)
    return b['iterations'], ir, b
(i1, r1, _), (i2, r2, b) = get(p1), get(p2)
print(f"{v} {n} {(r2 - r1) / (i2 - i1):.1f} {b.get('reserved_over_live', 0):.4f} {1000 * b.get('events_per_op', 0):.2f}")
P
  done
done
