#!/usr/bin/env bash
# s36 call E (device), the same bundle, when failed machine starts had left too little device time
# for calls B-D: the real-program parts one round each, in order of what the issues judge first
# (replay, torch, serve), then the soak beside the GPU tests and faults (60 s), the sanitizer.
#   OUT=... bash docs/results/<this directory>/run_e.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s36_e}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/probes.txt" 2>&1
export REPLAY_ROUNDS=1 TORCH_ROUNDS=1 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 SERVE_ROUNDS=1
export SOAK_SECONDS=60 SOAK_SIZES=mixed
bash .bundle/gpu-run "$out" $(( ${BUDGET:-590} - 12 )) replay:165 torch:140 serve:120 soak_tests:75 sanitizer
cat "$out/probes.txt" "$out/gpu-run.log"
