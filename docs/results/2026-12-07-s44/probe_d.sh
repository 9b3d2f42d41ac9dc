#!/usr/bin/env bash
# s44, call d: mlp_4stream on the CUDA backend, per_stream (each stream's own frees immediate in
# its own pool, the bound) beside per_stream_ordered (the same pools, every free stream-ordered: a
# pool per stream as a program can use one today) and today's stream-ordered replay, every variant
# and its -remap configuration, and cudaMallocAsync; 5 interleaved repetitions pinned to CPU 2.
#   OUT=$OUT bash docs/results/2026-12-07-s44/probe_d.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
[ -x .bundle/bin/bench ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name --format=csv,noheader
filter='^(replay/(mutex|lockfree|tls|stream)(-remap)?/mlp_4stream(/per_stream|/per_stream_ordered)?/real_time|replay/cudaMallocAsync/mlp_4stream/real_time|limit/epoch_event/real_time)$'
taskset -c 2 .bundle/bin/bench --backend=cuda --traces=.bundle/traces --benchmark_filter="$filter" \
  --benchmark_min_time=0.5 --benchmark_repetitions=${REPS:-5} --benchmark_enable_random_interleaving=true \
  --benchmark_format=json --benchmark_out="$out/probe_d.json" --benchmark_out_format=json \
  >/dev/null 2>"$out/probe_d.err" || echo "bench: exit $?"
python3 docs/results/2026-12-07-s44/medians.py "$out/probe_d.json"
