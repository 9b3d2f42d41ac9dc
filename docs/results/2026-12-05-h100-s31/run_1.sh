#!/usr/bin/env bash
# s31 call 1 (device): what an epoch's event costs, part by part, and the handles the runtime gives
# streams (.bundle_base_slim/probe, built from probe.cu beside it); then an A/B of the multi-stream
# replays between this commit's bench (.bundle: the stream caches hash the whole handle, two ways
# a set) and the s30 bench (.bundle_base_slim: bits 4-6 of the handle, direct-mapped), alternating
# fresh processes (bench/ab_bundles.sh), and cudaMallocAsync on the same traces.
#   bash docs/results/2026-12-05-h100-s31/run_1.sh   (OUT: where results go; carry .bundle and .bundle_base_slim)
set -u
out=${OUT:-/tmp/s31_1}
mkdir -p "$out/ab"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
./.bundle_base_slim/probe > "$out/probe.txt" 2>&1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
F='^replay/(lockfree|mutex|tls|stream)/(mlp_4stream|lm_infer_varseq|transformer_lm_train)(/elided)?/real_time$'
ROUNDS=${ROUNDS:-3} REPS=3 MIN_TIME=0.3 TRACES=$PWD/.bundle/traces bash bench/ab_bundles.sh "$out/ab" "$F" .bundle .bundle_base_slim
./.bundle/bin/bench --backend=cuda --traces=.bundle/traces \
  --benchmark_filter='^replay/cudaMallocAsync/(mlp_4stream|lm_infer_varseq|transformer_lm_train)/real_time$' \
  --benchmark_repetitions=3 --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true \
  --benchmark_format=json > "$out/ab/cudaMallocAsync.json" 2> "$out/ab/cudaMallocAsync.err"
tar -cJf "$out/s31_1.tar.xz" -C "$out" gpu.txt probe.txt ab
