#!/usr/bin/env bash
# s27 call c (part 3 of 3): gpu-suite's torch part for every variant, two alternating rounds
# (train_compare.py 100 steps; workloads.py 40 steps: torch, torch-expandable, cudaMallocAsync, the
# four variants with the plug-in's defaults, then tls with the library's defaults once), then its
# replay part, two rounds (every allocator in its own processes, the order rotating, 3 repetitions x
# 0.5 s a point in random order; stream-ordered, /elided and /immediate; the four variants and
# cudaMallocAsync).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
TORCH_ROUNDS=${TORCH_ROUNDS:-2} TORCH_STEPS=100 TORCH_WORKLOAD_STEPS=40 timeout 250 bash .bundle/gpu-suite $o torch > /dev/null 2>&1; el torch rc=$?
grep -E "identical|differ|Error" $o/torch.log | head -5
left=$(( 585 - ($(date +%s)-start) ))
REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} timeout $left bash .bundle/gpu-suite $o replay > /dev/null 2>&1; el replay rc=$?
tail -3 $o/replay.log
tar cJf $OUT/c.tar.xz -C $OUT c; el done
