#!/usr/bin/env bash
# s32 call 3 (device): the lazy verify state and guard ring now zeroed and then the device
# synchronized, once (cuda_backend's ensure_*): probe6 in two orders, limit/epoch_event, and
# gpu-suite's tests part (every test binary; the injected faults, which the verify kernels catch).
#   bash docs/results/2026-12-06-s32/run_3.sh   (OUT; carry .bundle, .bundle_base_slim)
set -u
out=${OUT:-/tmp/s32_3}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ./.bundle_base_slim/probe6 vgn; ./.bundle_base_slim/probe6 gnv; } > "$out/probe6.txt" 2>&1
./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
  --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median > "$out/epoch_event.txt"
FAULT_SECONDS=5 timeout ${TESTS_BUDGET:-200} bash .bundle/gpu-suite "$out/tests" tests > "$out/tests_part.log" 2>&1; echo "tests part exit $?" >> "$out/tests_part.log"
tar -cJf "$out/s32_3.tar.xz" -C "$out" probe6.txt epoch_event.txt tests tests_part.log
cat "$out/probe6.txt" "$out/epoch_event.txt"; grep -E "FAILED|exit=|== done|tests part" "$out/tests_part.log"
