#!/usr/bin/env bash
# s47, call c of the results page's run: the soak (`stress --threads=64 --streams=16`, SOAK_SECONDS
# per variant, 1-64 MiB requests among the classes, the four variants side by side) beside every
# GPU test and the injected faults (soak_tests), then issue 15's single-thread spread (whole).
#   OUT=$OUT bash docs/results/2026-12-07-s47/run_c.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
SOAK_SECONDS=${SOAK_SECONDS:-300} SOAK_SIZES=mixed \
  bash .bundle/gpu-run "$out" "${BUDGET:-570}" soak_tests:$(( ${SOAK_SECONDS:-300} + 15 )) spread:150
cat "$out/gpu-run.log"
