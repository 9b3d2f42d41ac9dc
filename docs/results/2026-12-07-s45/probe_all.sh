#!/usr/bin/env bash
# s45's one GPU call (the device budget left room for one): most important first.
#  1. every trace's stream-ordered replay, every variant as it is, with -arenas (stream_arenas 16)
#     and -arenas-256k (and classes up to 256 KiB), beside cudaMallocAsync; one process,
#     repetitions interleaved, pinned to CPU 2; limit/epoch_event.
#  2. a stress soak of every variant with 8 arenas of 16 streams, 1-64 MiB requests among the
#     classes, remap 1.05 (SOAK seconds each).
#  3. the arenas' conformance suite on the CUDA backend (lockfree).
#  4. pair/tls and pair/stream at 1 and 16 threads with and without arenas (the front's cost on
#     the default stream), and serve (small and mixed, 16 and 64 threads) with and without arenas
#     beside the peers.
#   OUT=$OUT bash docs/results/2026-12-07-s45/probe_all.sh     (repository root; .bundle carried)
# REPS (replay repetitions, 3), SOAK (seconds, 10), SKIP_SERVE=1: a shorter call.
set -u
out=${OUT:?OUT}
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name --format=csv,noheader
b=.bundle/bin/bench
v='(mutex|lockfree|tls|stream)'
filter="^(replay/$v(-arenas|-arenas-256k)?/[a-z0-9_]+/real_time|replay/cudaMallocAsync/[a-z0-9_]+/real_time|limit/epoch_event/real_time)\$"
timeout 270 taskset -c 2 $b --backend=cuda --traces=.bundle/traces --benchmark_filter="$filter" \
  --benchmark_min_time=0.3 --benchmark_repetitions=${REPS:-3} --benchmark_enable_random_interleaving=true \
  --benchmark_format=json --benchmark_out="$out/replay.json" --benchmark_out_format=json \
  >"$out/replay.log" 2>&1 || echo "bench replay: exit $?"
python3 docs/results/2026-12-07-s45/summary.py "$out/replay.json" | tee "$out/summary.txt"
for variant in mutex lockfree tls stream; do
  timeout 60 .bundle/bin/stress --variant=$variant --backend=cuda --threads=64 --streams=16 --sizes=mixed \
    --stream-arenas=8 --remap-ratio=1.05 --duration=${SOAK:-10} --quiet >"$out/soak_$variant.log" 2>&1
  echo "soak $variant (arenas): exit $? $(grep -E 'violations|result' "$out/soak_$variant.log" | tr -s ' ' | tr '\n' ' ')"
done
timeout 60 .bundle/bin/stream_arenas_conformance_test --gtest_filter='arenas/conformance/4.*' >"$out/conformance.log" 2>&1
echo "conformance (CUDA, lockfree arenas): exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]' "$out/conformance.log" | head -3 | tr '\n' ' ')"
timeout 60 $b --backend=cuda --traces= --benchmark_filter="^pair/(tls|stream)(-arenas)?/4096/real_time/threads:(1|16)\$" \
  --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
  --benchmark_format=json --benchmark_out="$out/pair.json" --benchmark_out_format=json >"$out/pair.log" 2>&1 || echo "pair: exit $?"
[ -n "${SKIP_SERVE:-}" ] || timeout 90 $b --backend=cuda --traces= \
  --benchmark_filter="^serve/($v(-arenas)?|cudaMallocAsync|cub)/(small|mixed)/real_time/threads:(16|64)\$" \
  --benchmark_min_time=0.5 --benchmark_format=json --benchmark_out="$out/serve.json" --benchmark_out_format=json \
  >"$out/serve.log" 2>&1 || echo "serve: exit $?"
python3 docs/results/2026-12-07-s45/summary.py --pair "$out/pair.json" --serve "$out/serve.json" | tee "$out/summary_serve.txt"
