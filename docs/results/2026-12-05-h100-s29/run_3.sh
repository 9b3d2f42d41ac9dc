#!/usr/bin/env bash
# s29 call 3 of 3: the same library and bundle as run_2.sh: the soak (5 minutes, --sizes=mixed with
# 1..64 MiB requests, 64 threads x 16 streams, the four variants side by side) beside the GPU tests
# and injected faults, the peers through stress (which did not fit call 2), then the single-thread
# spread (5 fresh processes, pinned and not, and the instances probe). The call typed this inline
# (its spread part ran the order of gpu-suite at e4d5eda, the instances probe last).
export SOAK_SECONDS=300 SOAK_SIZES=mixed SPREAD_PROCESSES=5
bash .bundle/gpu-run "$OUT" "${BUDGET:-560}" soak_tests peers spread
