#!/usr/bin/env bash
# s41 call B (device), the same bundle: the device's name and limit/epoch_event, gpu-suite's soak
# (90 s, --sizes=mixed) beside its tests, torch (2 rounds), the spread (five fresh processes per
# variant, pinned and free), then aslr_probe.sh (do the single-thread levels follow the layout?).
#   OUT=... BUDGET=... bash docs/results/2026-12-07-s41/run_b.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s41_b}
mkdir -p "$out"
here=$(dirname "$0")
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
start=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  ./.bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/epoch_event' --benchmark_repetitions=3 \
    --benchmark_min_time=0.3 --benchmark_report_aggregates_only=true 2>&1 | grep median
} > "$out/probes.txt" 2>&1
export SOAK_SECONDS=${SOAK_SECONDS:-90} SOAK_SIZES=mixed
export TORCH_ROUNDS=${TORCH_ROUNDS:-2} TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40
export SPREAD_PROCESSES=5
left=$(( ${BUDGET:-520} - 55 - ($(date +%s) - start) ))
bash .bundle/gpu-run "$out" "$left" ${PARTS:-soak_tests torch spread:166}
# The probe in what is left (about 45 s for 8 processes of each mode and variant).
left=$(( ${BUDGET:-520} - 5 - ($(date +%s) - start) ))
if (( left > 20 )); then
  timeout "$left" bash "$here/aslr_probe.sh" "$out" 8 .bundle/bin/bench > /dev/null 2>&1
fi
cat "$out/probes.txt" "$out/gpu-run.log"
