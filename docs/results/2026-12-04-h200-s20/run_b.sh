#!/usr/bin/env bash
# GPU call b of 2026-12-04 s20: what the stream variant's stream queries cost in serve/mixed. The
# build of call a (s20's steal, steal_busy_hold 50 us) with stream, stream-hold0 (asks every
# time), stream-holdinf (a stream found busy never asked again: next to no queries) and lockfree;
# 16 and 64 threads, each in its own process per round, 6 rounds, the order rotating, 3 x 0.5 s.
set -u
b=.bundle/bin
o=$OUT/b; mkdir -p $o/ab; start=$(date +%s)
cfgs=("bench stream" "bench stream-holdinf" "bench lockfree" "bench stream-hold0")
for r in 1 2 3 4 5 6; do
  for i in "${!cfgs[@]}"; do
    read -r exe a <<< "${cfgs[$(( (i + r - 1) % ${#cfgs[@]} ))]}"
    timeout 60 $b/$exe --backend=cuda --traces= --benchmark_filter="^serve/$a/mixed/real_time/threads:(16|64)\$" \
      --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out=$o/ab/new_${a}_r$r.json --benchmark_out_format=json > $o/ab/new_${a}_r$r.log 2>&1
    echo "serve $a round=$r exit=$?" >> $o/summary.txt
  done
done
echo "total $(( $(date +%s) - start )) s" | tee -a $o/summary.txt
tar czf $OUT/b.tgz -C $OUT b
