#!/usr/bin/env bash
# s32 call 1 (device): where an epoch's event cost goes, and issue 14's hot-path check.
# 1. probe3 (probe3.cpp beside it, linked with this commit's libcudapool_core.a): the bare
#    cudaEventRecord/cudaEventQuery ring, the backend's, queries 1..64 records behind with host
#    work between, and each call timed alone after touching 0 KiB..8 MiB of memory (cold caches).
# 2. limit/epoch_event.
# 3. replay of lm_infer_varseq, transformer_lm_train and mlp_4stream (gpu-suite's replay part, two
#    rounds of fresh processes): lockfree, lockfree-batch256 (a quarter of the events), mutex, tls,
#    stream and cudaMallocAsync, with device_record_ns_per_call and device_query_ns_per_call (the
#    time inside the calls where the pool makes them, counting_backend, s32).
# 4. pair/tls and pair/stream at 1 and 16 threads: this commit (b0) against s30 (b1) and the
#    pre-heap main abb4709 (b2), four alternating rounds (bench/ab_bundles.sh).
#   bash docs/results/2026-12-06-s32/run_1.sh   (OUT; carry .bundle, .bundle_base_slim, .bundle_main)
set -u
here=docs/results/2026-12-06-s32
out=${OUT:-/tmp/s32_1}
mkdir -p "$out/pair" "$out/traces"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nproc; date -u +%FT%TZ
  ./.bundle_base_slim/probe3
} > "$out/probe3.txt" 2>&1
./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
  --benchmark_min_time=0.5 --benchmark_report_aggregates_only=true > "$out/epoch_event.txt" 2>&1
for t in lm_infer_varseq transformer_lm_train mlp_4stream; do cp .bundle/traces/$t.csv "$out/traces/"; done
REPLAY_ALLOCATORS="lockfree lockfree-batch256 mutex tls stream cudaMallocAsync" REPLAY_ROUNDS=2 REPLAY_REPS=3 \
  REPLAY_MIN_TIME=0.3 REPLAY_TRACES="$out/traces" PART_DEADLINE=$(( $(date +%s) + ${REPLAY_BUDGET:-240} )) \
  bash .bundle/gpu-suite "$out/replay" replay > /dev/null 2>&1
ROUNDS=4 REPS=5 MIN_TIME=0.05 TRACES= bash bench/ab_bundles.sh "$out/pair" '^pair/(tls|stream)/4096/real_time/threads:(1|16)$' \
  .bundle .bundle_base_slim .bundle_main > "$out/pair/rounds.txt" 2>&1
python3 docs/results/2026-12-05-h100-s30/pair_ab.py "$out/pair" > "$out/pair/summary.txt" 2>&1
python3 $here/summary_1.py "$out" > "$out/summary.txt" 2>&1
tar -cJf "$out/s32_1.tar.xz" -C "$out" probe3.txt epoch_event.txt replay pair summary.txt
cat "$out/probe3.txt" "$out/epoch_event.txt" "$out/pair/summary.txt" "$out/summary.txt"
