#!/bin/bash
# m.sh BENCH TAG : callgrind (cg.sh) on mlp_4stream and lm_train, mutex-arenas, passes 1 and 3
set -eu
B=$1 T=$2 O=/work/wt-heap2/build/cg
S=/work/wt-heap2/docs/results/2026-12-07-s48/sim_heap
mkdir -p $O; cd /work/wt-heap2
bash $S/cg.sh $B $O $T traces/mlp_4stream.csv mlp_4stream
bash $S/cg.sh $B $O $T traces/lm_train.csv lm_train
python3 /work/wt-heap2/build/tools/summ.py $T
