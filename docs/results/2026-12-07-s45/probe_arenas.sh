#!/usr/bin/env bash
# s45: stream_arenas on the CUDA backend. Every trace's stream-ordered replay for every variant as
# it is, with -arenas (pool_options::stream_arenas = 16), -arenas-remap (and remap_ratio 1.05) and
# -arenas-256k (classes up to 256 KiB),
# beside cudaMallocAsync, in one process, repetitions interleaved, pinned to CPU 2, and
# limit/epoch_event. First: the arenas' conformance suite on the
# GPU (lockfree) and a stress soak of every variant with 8 arenas of 16 streams (SOAK seconds each).
#   OUT=$OUT bash docs/results/2026-12-07-s45/probe_arenas.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
[ -x .bundle/bin/bench ] || tar -xJf .bundle/bin.tar.xz -C .bundle
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name --format=csv,noheader
.bundle/bin/stream_arenas_conformance_test --gtest_filter='arenas/conformance/4.*' >"$out/conformance.log" 2>&1
echo "conformance (CUDA, lockfree arenas): exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]' "$out/conformance.log" | head -3 | tr '\n' ' ')"
for variant in mutex lockfree tls stream; do
  .bundle/bin/stress --variant=$variant --backend=cuda --threads=64 --streams=16 --sizes=mixed --stream-arenas=8 \
    --remap-ratio=1.05 --duration=${SOAK:-20} --quiet >"$out/soak_$variant.log" 2>&1
  echo "soak $variant (arenas): exit $? $(grep -E 'violations|result' "$out/soak_$variant.log" | tr -s ' ' | tr '\n' ' ')"
done
v='(mutex|lockfree|tls|stream)'
filter="^(replay/$v(-arenas|-arenas-remap|-arenas-256k)?/[a-z0-9_]+/real_time|replay/cudaMallocAsync/[a-z0-9_]+/real_time|limit/epoch_event/real_time)\$"
taskset -c 2 .bundle/bin/bench --backend=cuda --traces=.bundle/traces --benchmark_filter="$filter" \
  --benchmark_min_time=0.3 --benchmark_repetitions=${REPS:-3} --benchmark_enable_random_interleaving=true \
  --benchmark_format=json --benchmark_out="$out/replay.json" --benchmark_out_format=json \
  >"$out/replay.log" 2>&1 || echo "bench replay: exit $?"
python3 docs/results/2026-12-07-s45/summary.py "$out/replay.json" | tee "$out/summary.txt"
