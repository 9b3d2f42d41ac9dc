#!/usr/bin/env bash
# s48, call a of the results page's run (issue 15, step 5), the library at 9281782 (s47's arenas
# fix): PyTorch and replay, every variant as it is and behind 16 stream arenas.
#  1. torch: train_compare.py (TORCH_TRAIN_PAIRS pairs (2), 200 steps, the plug-in's defaults), then
#     workloads.py (the four PyTorch workloads, 50 steps, one round) for PyTorch's allocator,
#     expandable segments, cudaMallocAsync, every variant with the plug-in's defaults and every
#     variant with 16 stream arenas (rows cudapool-<v>-arenas).
#  2. replay: every trace of the bundle, stream-ordered, the four variants as they are and with
#     16 stream arenas (<v>-arenas), beside cudaMallocAsync; REPLAY_ROUNDS rounds (2), each process
#     3 x REPLAY_MIN_TIME (0.3) s a point, interleaved, pinned to REPLAY_CPU (2).
#   OUT=$OUT bash docs/results/2026-12-07-s48/run_a.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
source "$(dirname "$0")/allocators.sh"
TORCH_STREAM_ARENAS=16 TORCH_TRAIN_PAIRS=${TORCH_TRAIN_PAIRS:-2} TORCH_LIBRARY_DEFAULT_VARIANTS= \
REPLAY_CPU=${REPLAY_CPU:-2} REPLAY_MODES= REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} REPLAY_MIN_TIME=${REPLAY_MIN_TIME:-0.3} \
REPLAY_ALLOCATORS="$(variants '') $(variants -arenas) cudaMallocAsync" \
  bash .bundle/gpu-run "$out" "${BUDGET:-560}" torch:200 replay:160
cat "$out/gpu-run.log"
