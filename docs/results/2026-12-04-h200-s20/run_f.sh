#!/usr/bin/env bash
# GPU call f of 2026-12-04 s20: is the single-thread spread between processes (issue 15; s19 call
# f: pair/tls/4096 1.75x between five free processes, 2.05x between five pinned to CPU 2) the
# processes' address layout? Fresh processes pinned to CPU 2, alternating with and without
# address-space randomisation (setarch -R), 10 each; per process pair/tls, pair/lockfree and
# limit/stack at 1 thread, 10 repetitions in random order, every repetition kept (each repetition
# is a fresh pool instance: bench's run_scope makes the pool per run).
set -u
b=.bundle/bin
o=$OUT/f; mkdir -p $o; start=$(date +%s)
filter='^(pair/(tls|lockfree)/4096/real_time/threads:1|limit/stack/real_time/threads:1)$'
setarch "$(uname -m)" -R true && echo "setarch -R works" | tee $o/summary.txt
for i in $(seq 1 10); do
  for mode in aslr noaslr; do
    pre=(taskset -c 2); [ $mode = noaslr ] && pre+=(setarch "$(uname -m)" -R)
    "${pre[@]}" $b/bench --backend=cuda --traces= --benchmark_filter="$filter" --benchmark_min_time=0.05 \
      --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true \
      --benchmark_out=$o/${mode}_$i.json --benchmark_out_format=json > /dev/null 2> $o/${mode}_$i.err
    echo "$mode $i exit=$?" >> $o/summary.txt
  done
done
echo "total $(( $(date +%s) - start )) s" | tee -a $o/summary.txt
tar czf $OUT/f.tgz -C $OUT f
