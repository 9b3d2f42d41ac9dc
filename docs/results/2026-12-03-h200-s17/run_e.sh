#!/usr/bin/env bash
# GPU call e of 2026-12-03 s17: serve/mixed alone at 16 and 64 threads, stream, lockfree, tls, mutex
# and none, 15 repetitions x 0.5 s in random interleaving (one process): is the stream variant's
# 0.80-0.82x of call d its own or the host's spread (cv 6-16% per point there)?
o=$OUT/e; mkdir -p $o; start=$(date +%s)
BENCH_MIN_TIME=0.5 BENCH_REPS=15 BENCH_INTERLEAVE=1 BENCH_FILTER='^serve/(mutex|lockfree|tls|stream|none)/mixed/real_time/threads:(16|64)$' \
  timeout 230 bash .bundle/gpu-suite $o bench > /dev/null 2>&1; echo "serve rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
mv $o/bench.json $o/bench_e.json; mv $o/bench.log $o/bench_e.log
