#!/usr/bin/env bash
# s31 call 2 (device): why limit/epoch_event (1,448 ns in s30) costs 4.5x the bare ring of
# cudaEventQuery + cudaEventRecord that run_1.sh's probe timed (323 ns): probe2 (probe2.cpp beside
# it, linked with this commit's libcudapool_core.a) times the bare ring before and after a cudapool
# CUDA backend exists and the same ring through the backend, in one process; then bench's
# limit/epoch_event on the same host. Then the hot-path check of issue 14 for the stream caches:
# pair/tls and pair/stream at 1 and 16 threads, this commit (b0) against s30 (b1) and abb4709 (b2).
#   bash docs/results/2026-12-05-h100-s31/run_2.sh   (OUT; carry .bundle, .bundle_base_slim, .bundle_main)
set -u
out=${OUT:-/tmp/s31_2}
mkdir -p "$out/pair"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  ./.bundle_base_slim/probe2
  ./.bundle_base_slim/probe2
} > "$out/probe2.txt" 2>&1
./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
  --benchmark_min_time=0.5 --benchmark_report_aggregates_only=true > "$out/epoch_event.txt" 2>&1
ROUNDS=4 REPS=5 MIN_TIME=0.05 TRACES= bash bench/ab_bundles.sh "$out/pair" '^pair/(tls|stream)/4096/real_time/threads:(1|16)$' \
  .bundle .bundle_base_slim .bundle_main > "$out/pair/rounds.txt" 2>&1
python3 docs/results/2026-12-05-h100-s30/pair_ab.py "$out/pair" > "$out/pair/summary.txt" 2>&1
tar -cJf "$out/s31_2.tar.xz" -C "$out" probe2.txt epoch_event.txt pair
cat "$out/probe2.txt" "$out/epoch_event.txt" "$out/pair/summary.txt"
