#!/bin/bash
# cg.sh BENCH OUTDIR TAG TRACE NAME : callgrind --dump-instr=yes, passes 1 and 3, mutex-arenas
set -eu
b=$1 o=$2 tag=$3 t=$4 n=$5
for p in 1 3; do
  CUDAPOOL_SIM_MEMORY_MIB=2048 valgrind --tool=callgrind --dump-instr=yes \
    --callgrind-out-file=$o/$tag.$n.$p.out $b --backend=sim --traces= --trace=$t --replay-passes=$p \
    --benchmark_filter="^replay/mutex-arenas/$n/iterations:[0-9]*/real_time\$" --benchmark_format=json > $o/$tag.$n.$p.json 2>$o/$tag.$n.$p.err &
done
wait
