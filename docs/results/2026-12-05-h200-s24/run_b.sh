#!/usr/bin/env bash
# s24 call b: gpu-suite's torch part for every variant, three rounds (TORCH_ROUNDS=3, alternating;
# train_compare.py 100 steps; workloads.py 40 steps: torch, torch-expandable, cudaMallocAsync, the
# four variants with the plug-in's defaults, then tls with the library's defaults once), as s19's
# call c. Bundle: .ci/gpu-bundle's.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
TORCH_ROUNDS=3 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 timeout 560 bash .bundle/gpu-suite $o torch > /dev/null 2>&1; el torch rc=$?
grep -E "identical|differ|Error" $o/torch.log | head -5
tar cJf $OUT/b.tar.xz -C $OUT b; el done
