#!/usr/bin/env bash
# GPU call c of 2026-12-02 s9 (part 3 of 3): gpu-suite's torch part for every variant
# (train_compare.py 100 steps with the library's default variant; workloads.py 40 steps: torch,
# torch-expandable, cudaMallocAsync, the four variants with the plug-in's defaults, tls with the
# library's defaults), then its spread part (5 free processes, one per CPU, 5 pinned to CPU 2).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
S=.bundle/gpu-suite
TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 timeout 330 bash $S $o torch > /dev/null 2>&1; el torch rc=$?
timeout 200 bash $S $o spread > /dev/null 2>&1; el spread rc=$?
grep -E "identical|differ|Error" $o/torch.log | head -5; cat $o/spread.log | tail -16
tar czf $OUT/c.tgz -C $OUT c; el done
