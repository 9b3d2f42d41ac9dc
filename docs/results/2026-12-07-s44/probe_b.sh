#!/usr/bin/env bash
# s44, call b: mlp_4stream's replay on the CUDA backend, every variant in every mode, with the new
# replay/<a>/mlp_4stream/per_stream (one pool per stream, each stream's frees immediate in its own
# pool: a bound for streams that keep to their own memory) beside the stream-ordered, elided and
# immediate replays and cudaMallocAsync, in one process, repetitions interleaved, pinned to CPU 2;
# and limit/epoch_event, the price of one event on this host.
#   OUT=$OUT bash docs/results/2026-12-07-s44/probe_b.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
[ -x .bundle/bin/bench ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name --format=csv,noheader
filter='^(replay/(mutex|lockfree|tls|stream|lockfree-tight|stream-tight|lockfree-remap|stream-remap)/mlp_4stream(/elided|/immediate|/per_stream)?/real_time|replay/cudaMallocAsync/mlp_4stream/real_time|limit/epoch_event/real_time)$'
taskset -c 2 .bundle/bin/bench --backend=cuda --traces=.bundle/traces --benchmark_filter="$filter" \
  --benchmark_min_time=0.5 --benchmark_repetitions=${REPS:-5} --benchmark_enable_random_interleaving=true \
  --benchmark_format=json --benchmark_out="$out/probe_b.json" --benchmark_out_format=json \
  >"$out/probe_b.log" 2>&1 || echo "bench: exit $?"
python3 docs/results/2026-12-07-s44/medians.py "$out/probe_b.json"
