#!/bin/bash
# A/B of two builds of bench on the sim backend, alternating base and new, ROUNDS rounds (default 3),
# pinned to vCPU 1 (PIN= runs unpinned; s26's serve_ab.sh), MIN_TIME s a point (default 0.2).
# Usage: [ROUNDS=N] [FILTER=REGEX] ab.sh BASE_BENCH NEW_BENCH OUT_DIR (from the repository root).
# s22: base a worktree of 71d0ecb (that session's start), new the build under test.
set -eu
base=$1 new=$2 out=$3
mkdir -p "$out"
F=${FILTER:-'replay/(lockfree|tls|stream|mutex)/(transformer_lm_train|cnn_varbatch|mlp_4stream|lm_train|lm_infer_varseq)(/elided|/immediate)?/real_time$|pair/(tls|lockfree|stream)/4096/real_time/threads:1$'}
for r in $(seq 1 "${ROUNDS:-3}"); do
  for b in base new; do
    bin=$base; [ $b = new ] && bin=$new
    ${PIN-taskset -c 1} "$bin" --backend=sim --traces=traces --trace=../shared/traces/transformer_lm_train.csv \
      --benchmark_filter="$F" --benchmark_min_time="${MIN_TIME:-0.2}" --benchmark_format=json 2>/dev/null > "$out/ab_${b}_$r.json"
  done
done
