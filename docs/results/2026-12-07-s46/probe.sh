#!/usr/bin/env bash
# s46's GPU call: the stream arenas in whole programs, each allocator in processes of its own
# (gpu-run, so that each part's files come back as one archive even if the call is cut):
#  1. torch: workloads.py (the four PyTorch workloads) for PyTorch's allocator, expandable segments,
#     cudaMallocAsync, every variant with the plug-in's defaults and every variant with 16 stream
#     arenas (TORCH_STREAM_ARENAS=16), one round, 50 steps; no training-loop pairs.
#  2. replay: every trace, stream-ordered only, every variant as it is, -arenas (classes up to
#     256 KiB in every arena, the default since s46) and -arenas-1m (1 MiB classes, s45's -arenas),
#     beside cudaMallocAsync; REPLAY_ROUNDS rounds (2), 3 x 0.3 s a point.
#  3. serve: small and mixed at 16 and 64 threads, every variant with and without arenas, tls-mr,
#     cudaMallocAsync, cub and none, one round.
#   OUT=$OUT bash docs/results/2026-12-07-s46/probe.sh       (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
arenas() { for v in mutex lockfree tls stream; do printf '%s ' "$v$1"; done; }
TORCH_STREAM_ARENAS=16 TORCH_TRAIN_PAIRS=0 TORCH_LIBRARY_DEFAULT_VARIANTS= \
REPLAY_MODES= REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} REPLAY_MIN_TIME=0.3 \
REPLAY_ALLOCATORS="$(arenas '') $(arenas -arenas) $(arenas -arenas-1m) cudaMallocAsync" \
SERVE_ROUNDS=1 SERVE_THREADS='16|64' SERVE_MIN_TIME=0.4 \
SERVE_ALLOCATORS="$(arenas '') $(arenas -arenas) tls-mr cudaMallocAsync cub none" \
  bash .bundle/gpu-run "$out" "${BUDGET:-560}" torch:150 replay:120 serve:60
cat "$out/gpu-run.log"
