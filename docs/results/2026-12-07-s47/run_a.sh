#!/usr/bin/env bash
# s47, call a of the results page's run (issue 15, step 5): PyTorch and replay, the parts where
# real programs decide, with the stream arenas beside every variant as it is; then the peers
# through stress and the sanitizer part. (Seven refused or failed starts took 826 s of the
# session's 1,800 s of device time before this call: the run is two calls, not three.)
#  1. torch: train_compare.py (TORCH_TRAIN_PAIRS pairs, 200 steps, the plug-in's defaults), then
#     workloads.py (the four PyTorch workloads, 50 steps, one round) for PyTorch's allocator,
#     expandable segments, cudaMallocAsync, every variant with the plug-in's defaults and every
#     variant with 16 stream arenas (rows cudapool-<v>-arenas).
#  2. replay: every trace of the bundle, stream-ordered, the four variants as they are and with
#     16 stream arenas (<v>-arenas), beside cudaMallocAsync; REPLAY_ROUNDS rounds (2), each process
#     3 x REPLAY_MIN_TIME (0.3) s a point, interleaved, each process pinned to REPLAY_CPU (2).
#  3. peers: `stress --allocator=cudaMallocAsync|cub --threads=16 --streams=16`, PEER_SECONDS (20) each.
#  4. sanitizer: compute-sanitizer on sanitizer_demo and pool_sanitizer_demo per variant.
#   OUT=$OUT bash docs/results/2026-12-07-s47/run_a.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
arenas() { for v in mutex lockfree tls stream; do printf '%s ' "$v$1"; done; }
TORCH_STREAM_ARENAS=16 TORCH_TRAIN_PAIRS=${TORCH_TRAIN_PAIRS:-1} TORCH_LIBRARY_DEFAULT_VARIANTS= \
REPLAY_CPU=${REPLAY_CPU:-2} REPLAY_MODES= REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} REPLAY_MIN_TIME=${REPLAY_MIN_TIME:-0.3} \
REPLAY_ALLOCATORS="$(arenas '') $(arenas -arenas) cudaMallocAsync" PEER_SECONDS=${PEER_SECONDS:-20} \
  bash .bundle/gpu-run "$out" "${BUDGET:-450}" torch:200 replay:110 peers:45 sanitizer:15
cat "$out/gpu-run.log"
