#!/usr/bin/env bash
# GPU call c of 2026-12-04 s19: gpu-suite's torch part for every variant, three
# rounds (TORCH_ROUNDS=3, alternating; train_compare.py 100 steps; workloads.py 40 steps: torch,
# torch-expandable, cudaMallocAsync, the four variants with the plug-in's defaults, then tls with
# the library's defaults once). Bundle: the plug-in and the Python files.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
TORCH_ROUNDS=3 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 timeout 560 bash .bundle/gpu-suite $o torch > /dev/null 2>&1; el torch rc=$?
grep -E "identical|differ|Error" $o/torch.log | head -5
tar czf $OUT/c.tgz -C $OUT c; el done
