#!/usr/bin/env bash
# s27 call b (part 2 of 3): gpu-suite's serve part (3 rounds, every allocator in its own processes,
# the order rotating; small and mixed at 1, 16 and 64 threads; the four variants, tls-mr,
# cudaMallocAsync, cub and none), then the spread part with issue 15's five processes
# (SPREAD_PROCESSES=5, SPREAD_REPETITIONS=6; with the instances probe and `instances --processes`).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
timeout 400 bash .bundle/gpu-suite $o serve > /dev/null 2>&1; el serve rc=$?
tail -3 $o/serve.log
left=$(( 580 - ($(date +%s)-start) ))
SPREAD_PROCESSES=5 SPREAD_REPETITIONS=6 timeout $left bash .bundle/gpu-suite $o spread > /dev/null 2>&1; el spread rc=$?
tail -3 $o/spread.log
tar cJf $OUT/b.tar.xz -C $OUT b; el done
