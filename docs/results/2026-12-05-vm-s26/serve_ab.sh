#!/bin/bash
# serve on the sim backend, base against new, alternating, ROUNDS rounds (default 3), 0.3 s per
# point, every variant, small and mixed, 1, 16 and 64 threads (the VM's 2 vCPUs are oversubscribed
# from 4 threads on: the heap's lock is contended there). Usage (from the repository root):
# serve_ab.sh BASE_BENCH NEW_BENCH OUT_DIR; then serve_ab.py OUT_DIR.
set -eu
base=$1 new=$2 out=$3
mkdir -p "$out"
F=${SERVE_FILTER:-'serve/(mutex|lockfree|tls|stream)/(small|mixed)/real_time/threads:(1|16|64)$'}
for r in $(seq 1 "${ROUNDS:-3}"); do
  for b in base new; do
    bin=$base; [ $b = new ] && bin=$new
    "$bin" --backend=sim --traces= --benchmark_filter="$F" --benchmark_min_time=0.3 --benchmark_format=json \
      2>/dev/null > "$out/serve_${b}_$r.json"
  done
done
