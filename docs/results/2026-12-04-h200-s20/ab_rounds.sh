#!/usr/bin/env bash
# ab_rounds.sh CALL "EXE ALLOCATOR"...: serve/mixed at 16 and 64 threads, each configuration (a
# bench binary of .bundle/bin and an allocator label) in its own process per round, 6 rounds, the
# order rotating, 3 x 0.5 s; JSON per process into $OUT/CALL/ab/<old|new>_<allocator>_r<round>.json
# (old: bench_old), then $OUT/CALL.tgz. summarize_a.py reads the folder. Calls a-d ran this loop
# inlined in their run_*.sh (factored out afterwards, unchanged).
set -u
call=$1; shift
cfgs=("$@")
b=.bundle/bin
o=$OUT/$call; mkdir -p $o/ab; start=$(date +%s)
for r in 1 2 3 4 5 6; do
  for i in "${!cfgs[@]}"; do
    read -r exe a <<< "${cfgs[$(( (i + r - 1) % ${#cfgs[@]} ))]}"
    tag=${exe#bench}; tag=${tag:+old}; tag=${tag:-new}
    timeout 60 $b/$exe --backend=cuda --traces= --benchmark_filter="^serve/$a/mixed/real_time/threads:(16|64)\$" \
      --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out=$o/ab/${tag}_${a}_r$r.json --benchmark_out_format=json > $o/ab/${tag}_${a}_r$r.log 2>&1
    echo "serve $tag $a round=$r exit=$?" >> $o/summary.txt
  done
done
echo "total $(( $(date +%s) - start )) s" | tee -a $o/summary.txt
tar czf $OUT/$call.tgz -C $OUT $call
