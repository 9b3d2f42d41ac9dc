#!/usr/bin/env bash
# s41 call A (device), one bundle built at HEAD with `bash .ci/gpu-bundle`: the real programs first
# (the task's order): the device's name and limit/epoch_event; serve (every variant, the peers, the
# no-allocator ceiling; 2 rounds), torch (train_compare in 2 pairs, workloads.py in 2 rounds), the soak
# (60 s, --sizes=mixed) beside the tests, the sanitizer demos.
#   OUT=... BUDGET=585 bash docs/results/2026-12-07-s41/run_a.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s41_a}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
start=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  ./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
    --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median
} > "$out/probes.txt" 2>&1
export SERVE_ROUNDS=${SERVE_ROUNDS:-2}
export TORCH_ROUNDS=${TORCH_ROUNDS:-2} TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40
export SOAK_SECONDS=${SOAK_SECONDS:-60} SOAK_SIZES=mixed
bash .bundle/gpu-run "$out" $(( ${BUDGET:-585} - 10 - ($(date +%s) - start) )) ${PARTS:-serve:240 torch:235 soak_tests:76 sanitizer:10}
cat "$out/probes.txt" "$out/gpu-run.log"
