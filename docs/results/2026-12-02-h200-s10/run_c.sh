#!/usr/bin/env bash
# GPU call c of 2026-12-02 s10 (part 3 of 3): gpu-suite's torch part for every variant, two rounds
# (TORCH_ROUNDS=2: the allocators' workloads.py processes alternate, the second round in reverse
# order; train_compare.py 100 steps with the library's default variant; workloads.py 40 steps:
# torch, torch-expandable, cudaMallocAsync, the four variants with the plug-in's defaults, then tls
# with the library's defaults once), then its spread part (5 free processes, one pinned to each
# CPU, 5 pinned to CPU 2). Bundle without the test binaries, the sanitizer demos, stress and the traces.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
S=.bundle/gpu-suite
TORCH_ROUNDS=2 TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 timeout 420 bash $S $o torch > /dev/null 2>&1; el torch rc=$?
timeout 150 bash $S $o spread > /dev/null 2>&1; el spread rc=$?
grep -E "identical|differ|Error" $o/torch.log | head -5; tail -16 $o/spread.log
tar czf $OUT/c.tgz -C $OUT c; el done
