#!/usr/bin/env bash
# s47, call a of the results page's run (issue 15, step 5): the three parts where real programs
# decide, every variant as it is and behind 16 stream arenas. Ten refused or failed device starts
# took 1,096 s of the session's 1,800 s of device time before this call, so the run is this call
# and what still fits after it (run_b.sh); a part's rounds stop at the call's deadline.
#  1. torch: train_compare.py (TORCH_TRAIN_PAIRS pairs (1), 200 steps, the plug-in's defaults), then
#     workloads.py (the four PyTorch workloads, 50 steps, one round) for PyTorch's allocator,
#     expandable segments, cudaMallocAsync, every variant with the plug-in's defaults and every
#     variant with 16 stream arenas (rows cudapool-<v>-arenas).
#  2. replay: every trace of the bundle, stream-ordered, the four variants as they are and with
#     16 stream arenas (<v>-arenas), beside cudaMallocAsync; REPLAY_ROUNDS rounds (2), each process
#     3 x REPLAY_MIN_TIME (0.3) s a point, interleaved, pinned to REPLAY_CPU (2).
#  3. serve: small and mixed at 1, 16 and 64 threads; every variant as it is and with 16 stream
#     arenas, tls-mr, cudaMallocAsync, cub and none, each in its own processes, SERVE_ROUNDS rounds
#     (2), 3 x SERVE_MIN_TIME (0.3) s a point.
#   OUT=$OUT bash docs/results/2026-12-07-s47/run_a.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
arenas() { for v in mutex lockfree tls stream; do printf '%s ' "$v$1"; done; }
TORCH_STREAM_ARENAS=16 TORCH_TRAIN_PAIRS=${TORCH_TRAIN_PAIRS:-1} TORCH_LIBRARY_DEFAULT_VARIANTS= \
REPLAY_CPU=${REPLAY_CPU:-2} REPLAY_MODES= REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} REPLAY_MIN_TIME=${REPLAY_MIN_TIME:-0.3} \
REPLAY_ALLOCATORS="$(arenas '') $(arenas -arenas) cudaMallocAsync" \
SERVE_ROUNDS=${SERVE_ROUNDS:-2} SERVE_MIN_TIME=${SERVE_MIN_TIME:-0.3} \
SERVE_ALLOCATORS="$(arenas '') $(arenas -arenas) tls-mr cudaMallocAsync cub none" \
  bash .bundle/gpu-run "$out" "${BUDGET:-450}" torch:200 replay:55 serve:110
cat "$out/gpu-run.log"
