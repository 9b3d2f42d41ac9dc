#!/usr/bin/env bash
# s47, call b of the results page's run: serve (small and mixed at 1, 16 and 64 threads; every
# variant as it is and with 16 stream arenas, tls-mr, cudaMallocAsync, cub and none, each in its
# own processes, SERVE_ROUNDS rounds (2), 3 x SERVE_MIN_TIME (0.3) s a point), then the soak
# (`stress --threads=64 --streams=16`, SOAK_SECONDS (120) per variant, 1-64 MiB requests among the
# classes, the four variants side by side) beside every GPU test and the injected faults
# (soak_tests), then the page's microbenchmarks (pagebench) and issue 15's single-thread spread,
# each only if it still fits.
#   OUT=$OUT bash docs/results/2026-12-07-s47/run_b.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
arenas() { for v in mutex lockfree tls stream; do printf '%s ' "$v$1"; done; }
soak=${SOAK_SECONDS:-120}
SERVE_ROUNDS=${SERVE_ROUNDS:-2} SERVE_MIN_TIME=${SERVE_MIN_TIME:-0.3} \
SERVE_ALLOCATORS="$(arenas '') $(arenas -arenas) tls-mr cudaMallocAsync cub none" \
SOAK_SECONDS=$soak SOAK_SIZES=mixed \
  bash .bundle/gpu-run "$out" "${BUDGET:-450}" serve:220 soak_tests:$(( soak + 15 )) pagebench:56 spread:150
cat "$out/gpu-run.log"
