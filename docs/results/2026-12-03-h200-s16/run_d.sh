#!/usr/bin/env bash
# GPU call d of 2026-12-03 s16: tls's reclaimed blocks into the reclaiming thread's empty bin
# (push_released) against a68960c's tls (bench_base), alternating, each process 3 x 0.5 s:
# replay/tls stream-ordered and elided (2 rounds), then serve/tls small and mixed at 16 and 64
# threads (1 round). ROUNDS (default "1 2") and NO_SERVE cut it to the device time left. Each process's JSON lands in $OUT/d at once (what finishes comes back).
export LD_LIBRARY_PATH=$PWD/.bundle/lib
o=$OUT/d; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
run() {  # run NAME BIN FILTER
  timeout 60 .bundle/bin/$2 --backend=cuda --traces=.bundle/traces --benchmark_filter="$3" \
    --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$o/$1.json --benchmark_out_format=json > /dev/null 2>&1; el $1 rc=$?
}
R='^replay/tls/[a-z_0-9]+(/elided)?/real_time$'
S='^serve/tls/(small|mixed)/real_time/threads:(16|64)$'
for r in ${ROUNDS:-1 2}; do run replay_base_r$r bench_base "$R"; run replay_new_r$r bench "$R"; done
[ -n "${NO_SERVE:-}" ] || { run serve_base_r1 bench_base "$S"; run serve_new_r1 bench "$S"; }
