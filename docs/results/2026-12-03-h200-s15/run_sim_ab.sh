#!/usr/bin/env bash
# The dev machine's A/B of 2026-12-03 s15 (2 cores, no GPU; sim backend): bench of 7d1ebca (a
# worktree at /tmp/base, default preset) against this session's (build/default), three alternating
# rounds, the lockfree and stream variants' replay of every trace (stream-ordered with the sim's
# events, and elided) at min_time 0.3 -> sim_ab/loc_<base|new>_<round>.json.
cd "$(dirname "$0")/../../.."
for r in 1 2 3; do
  for side in base new; do
    if [ $side = base ]; then b=/tmp/base/build/default/bench/bench; else b=./build/default/bench/bench; fi
    $b --backend=sim --traces=traces --trace=../shared/traces/transformer_lm_train.csv \
      --benchmark_filter='replay/(stream|lockfree)/[a-z_]+(/elided)?/real_time' --benchmark_min_time=0.3 \
      --benchmark_format=json 2>/dev/null > docs/results/2026-12-03-h200-s15/sim_ab/loc_${side}_$r.json
  done
done
