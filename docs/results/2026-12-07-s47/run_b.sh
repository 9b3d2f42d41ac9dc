#!/usr/bin/env bash
# s47, call b of the results page's run, on the machine call a left warm: the peers through stress
# (`stress --allocator=cudaMallocAsync|cub --threads=16 --streams=16`, PEER_SECONDS (20) each), the
# sanitizer part, the soak (`stress --threads=64 --streams=16`, SOAK_SECONDS (60) per variant, 1-64
# MiB requests among the classes, the four variants side by side) beside every GPU test and the
# injected faults (soak_tests), then the page's microbenchmarks (pagebench) and issue 15's
# single-thread spread, each only if it still fits.
#   OUT=$OUT bash docs/results/2026-12-07-s47/run_b.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
soak=${SOAK_SECONDS:-60}
PEER_SECONDS=${PEER_SECONDS:-20} SOAK_SECONDS=$soak SOAK_SIZES=mixed \
  bash .bundle/gpu-run "$out" "${BUDGET:-200}" peers:45 sanitizer:12 soak_tests:$(( soak + 15 )) pagebench:56 spread:150
cat "$out/gpu-run.log"
