#!/usr/bin/env bash
# s48, call c, on the machine call b left warm: the soak (`stress --threads=64 --streams=16`,
# SOAK_SECONDS (300) per variant, 1-64 MiB requests among the classes, the four variants side by
# side) beside every GPU test and the injected faults (soak_tests), then the page's
# microbenchmarks (pagebench) and issue 15's single-thread spread, each only if it still fits.
#   OUT=$OUT bash docs/results/2026-12-07-s48/run_c.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
soak=${SOAK_SECONDS:-300}
SOAK_SECONDS=$soak SOAK_SIZES=mixed \
  bash .bundle/gpu-run "$out" "${BUDGET:-570}" soak_tests:$(( soak + 15 )) pagebench:56 spread:140
cat "$out/gpu-run.log"
