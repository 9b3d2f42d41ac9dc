#!/usr/bin/env bash
# s36 call B (device): the final library's checks and its PyTorch loops, for docs/results.md: the
# device's name and limit/epoch_event, then gpu-suite's soak (90 s, --sizes=mixed) beside its tests
# (every test binary, backend_test, the injected faults), torch (2 rounds), the sanitizer demos.
#   OUT=... bash docs/results/<this directory>/run_b.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s36_b}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  ./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
    --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median
} > "$out/probes.txt" 2>&1
export SOAK_SECONDS=${SOAK_SECONDS:-90} SOAK_SIZES=mixed
export TORCH_ROUNDS=2 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40
bash .bundle/gpu-run "$out" $(( ${BUDGET:-570} - 20 )) soak_tests torch sanitizer
cat "$out/probes.txt" "$out/gpu-run.log"
