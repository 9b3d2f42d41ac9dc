#!/usr/bin/env bash
# GPU call d of 2026-12-02 s7, the final code (the plug-in's new defaults as defaults, trim closing
# open epochs): gpu-suite's torch part, TORCH_STEPS=100 (train_compare.py: PyTorch's allocator and
# the plug-in's default, losses and parameters compared bitwise) and TORCH_WORKLOAD_STEPS=40
# (workloads.py: torch, torch-expandable, cudaMallocAsync, the four variants with the plug-in's
# defaults, tls with the library's defaults). Run from the repository root with .bundle carried.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s)
TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 timeout 290 bash .bundle/gpu-suite $o torch > /dev/null 2>&1
echo "torch rc=$? $(( $(date +%s)-start ))s" | tee $o/times.txt
grep -E "match|identical|differ|Error|error" $o/torch.log | head -20
tar czf $OUT/d.tgz -C $OUT d
