#!/bin/bash
# usage: ir.sh BENCH OUTDIR TRACEFILE VARIANT... ; callgrind at P1=1 and P2=3 passes, ordered mode (replay/<v>/<trace>)
set -eu
bench=$1 out=$2 t=$3; shift 3
p1=${P1:-1} p2=${P2:-3}
mkdir -p "$out"
n=$(basename "$t" .csv)
for v in "$@"; do
  for p in $p1 $p2; do
    CUDAPOOL_SIM_MEMORY_MIB=${SIMMIB:-2048} valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
      --callgrind-out-file="$out/$v.$n.$p.out" "$bench" --backend=sim --traces= --trace="$t" --replay-passes=$p \
      --benchmark_filter="^replay/$v/$n/iterations:[0-9]*/real_time\$" --benchmark_format=json 2>"$out/$v.$n.$p.err" > "$out/$v.$n.$p.json"
  done
done
