#!/usr/bin/env bash
# s45, second call: the small-class hot path (pair/tls and pair/stream at 1 and 16 threads) beside
# the same variants with stream arenas on (their pairs run on the default stream: arena 0, the
# front's cost alone), and serve (small and mixed requests at 16 and 64 threads, each thread a
# stream of its own) for every variant with and without arenas and the peers, repetitions
# interleaved.
#   OUT=$OUT bash docs/results/2026-12-07-s45/probe_serve.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name --format=csv,noheader
filter="^pair/(tls|stream)(-arenas)?/4096/real_time/threads:(1|16)\$"
.bundle/bin/bench --backend=cuda --traces= --benchmark_filter="$filter" \
  --benchmark_min_time=0.3 --benchmark_repetitions=${REPS:-3} --benchmark_enable_random_interleaving=true \
  --benchmark_format=json --benchmark_out="$out/pair.json" --benchmark_out_format=json \
  >"$out/pair.log" 2>&1 || echo "bench pair: exit $?"
filter="^serve/((mutex|lockfree|tls|stream)(-arenas)?|cudaMallocAsync|cub)/(small|mixed)/real_time/threads:(16|64)\$"
.bundle/bin/bench --backend=cuda --traces= --benchmark_filter="$filter" \
  --benchmark_min_time=0.5 --benchmark_repetitions=${SERVE_REPS:-2} --benchmark_enable_random_interleaving=true \
  --benchmark_format=json --benchmark_out="$out/serve.json" --benchmark_out_format=json \
  >"$out/serve.log" 2>&1 || echo "bench serve: exit $?"
python3 docs/results/2026-12-07-s45/summary.py --pair "$out/pair.json" --serve "$out/serve.json" | tee "$out/summary_serve.txt"
