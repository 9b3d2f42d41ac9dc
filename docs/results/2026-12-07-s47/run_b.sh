#!/usr/bin/env bash
# s47, call b of the results page's run: serve (small and mixed at 1, 16 and 64 threads; every
# variant as it is and with 16 stream arenas, tls-mr, cudaMallocAsync, cub and none, each in its
# own processes, SERVE_ROUNDS rounds, 3 x SERVE_MIN_TIME s a point), the page's microbenchmarks
# (pagebench), the peers through stress, and the sanitizer part.
#   OUT=$OUT bash docs/results/2026-12-07-s47/run_b.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
arenas() { for v in mutex lockfree tls stream; do printf '%s ' "$v$1"; done; }
SERVE_ROUNDS=${SERVE_ROUNDS:-2} SERVE_MIN_TIME=${SERVE_MIN_TIME:-0.4} \
SERVE_ALLOCATORS="$(arenas '') $(arenas -arenas) tls-mr cudaMallocAsync cub none" \
  bash .bundle/gpu-run "$out" "${BUDGET:-570}" serve:250 pagebench:60 peers:70 sanitizer:20
cat "$out/gpu-run.log"
