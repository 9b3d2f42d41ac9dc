#!/usr/bin/env bash
# GPU call f of 2026-12-03 s17: is the stream variant's place on serve/mixed (last in calls d and e)
# its own? serve/<stream|lockfree|mutex>/mixed at 16 and 64 threads, one process per allocator,
# 3 rounds (the order rotating), each process 5 repetitions x 0.5 s.
export LD_LIBRARY_PATH=$PWD/.bundle/lib
o=$OUT/f; mkdir -p $o; start=$(date +%s)
run() {  # run ALLOC ROUND
  timeout 25 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter="^serve/$1/mixed/real_time/threads:(16|64)\$" \
    --benchmark_min_time=0.5 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=$o/serve_$1_r$2.json --benchmark_out_format=json > /dev/null 2>&1
  echo "$1 r$2 rc=$? $(( $(date +%s)-start ))s" | tee -a $o/times.txt
}
for a in stream lockfree mutex; do run $a 1; done
for a in lockfree mutex stream; do run $a 2; done
for a in mutex stream lockfree; do run $a 3; done
tar czf $OUT/f.tgz -C $OUT f
