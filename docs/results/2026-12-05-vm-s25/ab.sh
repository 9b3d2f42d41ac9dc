#!/bin/bash
# A/B of two builds of bench on the sim backend, alternating base and new, ROUNDS rounds (default 5),
# pinned to vCPU 1. Usage (from the repository root): ab.sh BASE_BENCH NEW_BENCH OUT_DIR
# s25: base = a worktree of 36b6a7f (the library of s24, 218df46), new = the marks rule (epoch_table::full).
set -eu
base=$1 new=$2 out=$3
mkdir -p "$out"
F='replay/(lockfree|tls|stream|mutex)/(transformer_lm_train|cnn_varbatch|mlp_4stream|lm_train|lm_infer_varseq)(/elided|/immediate)?/real_time$|pair/(tls|lockfree|stream|mutex)/4096/real_time/threads:1$'
for r in $(seq 1 "${ROUNDS:-5}"); do
  for b in base new; do
    bin=$base; [ $b = new ] && bin=$new
    taskset -c 1 "$bin" --backend=sim --traces=traces --trace=../shared/traces/transformer_lm_train.csv \
      --benchmark_filter="$F" --benchmark_min_time=0.2 --benchmark_format=json 2>/dev/null > "$out/ab_${b}_$r.json"
  done
done
