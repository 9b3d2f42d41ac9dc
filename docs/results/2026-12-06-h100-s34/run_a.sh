#!/usr/bin/env bash
# s34 call A (device): the final library (the bundle at this commit: s33's, plus the mutex variant
# on word_lock and epochs whose event is recorded with no shard lock held) checked and its real
# programs measured, for docs/results.md: the device's name, then gpu-suite's soak (90 s,
# --sizes=mixed) beside its tests (every test binary, backend_test, the injected faults), torch
# (2 rounds) and serve (what fits of 2 rounds).
#   OUT=... bash docs/results/2026-12-06-gpu-s34/run_a.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s34_a}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  ./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
    --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median
} > "$out/probes.txt" 2>&1
export SOAK_SECONDS=${SOAK_SECONDS:-90} SOAK_SIZES=mixed
export TORCH_ROUNDS=2 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 SERVE_ROUNDS=2
bash .bundle/gpu-run "$out" $(( ${BUDGET:-570} - 20 )) soak_tests torch serve
cat "$out/probes.txt" "$out/gpu-run.log"
