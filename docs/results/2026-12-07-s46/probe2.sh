#!/usr/bin/env bash
# s46's second GPU call (issue 14's validation with the arenas): the 64-thread, 16-stream soak of
# every variant side by side with 8 stream arenas and 1-64 MiB requests among the classes
# (SOAK_SECONDS, 300), then the arenas' conformance suite on the CUDA backend.
#   OUT=$OUT bash docs/results/2026-12-07-s46/probe2.sh       (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
SOAK_STREAM_ARENAS=8 SOAK_SIZES=mixed SOAK_SECONDS=${SOAK_SECONDS:-300} \
  bash .bundle/gpu-run "$out" "${BUDGET:-$(( ${SOAK_SECONDS:-300} + 40 ))}" soak
cat "$out/gpu-run.log"
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -x .bundle/bin/stream_arenas_conformance_test ] &&
  timeout 60 .bundle/bin/stream_arenas_conformance_test --gtest_filter='arenas/conformance/4.*' > "$out/conformance.log" 2>&1
echo "conformance (CUDA, lockfree arenas): exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]' "$out/conformance.log" | tr '\n' ' ')"
