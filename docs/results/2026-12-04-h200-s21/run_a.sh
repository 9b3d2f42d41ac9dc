#!/usr/bin/env bash
# s21 call a (issue 15's single-thread spread): the instances probe (bench/instances.cpp), 8 pools of
# each variant alive at once in one process, 20 interleaved rounds of 200k pairs of 4 KiB on one
# thread; three processes pinned to CPU 2 and three free. Then, for comparison in the same call,
# bench's pair/<tls|lockfree>/4096 at 1 thread in five fresh processes pinned to CPU 2 (10
# repetitions each, every repetition a fresh pool), as s20's call f ran it.
# From the repository root with the bundle in .bundle/ (LD_LIBRARY_PATH=.bundle/lib): run_a.sh OUT
set -u
out=${1:?usage: run_a.sh OUT}
mkdir -p "$out"
status=0
for k in 1 2 3; do
  for mode in pinned free; do
    pin=(); [ "$mode" = pinned ] && pin=(taskset -c 2)
    "${pin[@]}" .bundle/bin/instances --backend=cuda --variant=tls --variant=lockfree --variant=mutex --variant=stream \
      --instances=8 --rounds=20 --pairs=200000 --seed="$k" --json="$out/${mode}_$k.json" > "$out/${mode}_$k.txt" 2>&1 || status=1
  done
done
for k in 1 2 3 4 5; do
  taskset -c 2 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^pair/(tls|lockfree)/4096/real_time/threads:1$' \
    --benchmark_repetitions=10 --benchmark_min_time=0.05 --benchmark_format=json > "$out/bench_$k.json" 2> "$out/bench_$k.err" || status=1
done
exit $status
