#!/bin/bash
# s49: host instructions per replayed operation of bench BENCH (sim, callgrind, passes 1 and 3; the
# difference over the two passes' operations, 13,652 on mlp_4stream and 48,464 on lm_train as in
# docs/results/2026-12-07-s48/sim_heap/round2.md). BENCH built with the sim-memory patch
# (docs/results/2026-12-07-s48/sim_replay/bench_sim_memory_env.patch).
#   bash cg_replays.sh BENCH TAG     (prints TAG TRACE POOL IR_PER_OP)
b=$1 tag=$2
mkdir -p /tmp/cg
for n in mlp_4stream lm_train; do
  t=$(dirname "$0")/../../../../traces/$n.csv
  case $n in mlp_4stream) ops=13652 ;; lm_train) ops=48464 ;; esac  # two passes (round2.md)
  for v in mutex-arenas lockfree-arenas tls-arenas stream-arenas tls stream; do
    for p in 1 3; do
      CUDAPOOL_SIM_MEMORY_MIB=2048 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg/$tag.$v.$n.$p.out $b --backend=sim --traces= --trace=$t --replay-passes=$p \
        --benchmark_filter="^replay/$v/$n/iterations:[0-9]*/real_time\$" --benchmark_format=json > /tmp/cg/$tag.$v.$n.$p.json 2>/tmp/cg/$tag.$v.$n.$p.err
    done
    i1=$(grep -m1 "^summary:" /tmp/cg/$tag.$v.$n.1.out | awk '{print $2}'); i3=$(grep -m1 "^summary:" /tmp/cg/$tag.$v.$n.3.out | awk '{print $2}')
    echo "$tag $n $v $(python3 -c "print(f'{($i3-$i1)/$ops:.1f}')")"
  done
done
