#!/usr/bin/env bash
# GPU call b of 2026-12-02 s7, code b47b24e: a 5-minute `stress --threads=64 --streams=16
# --sizes=mixed` soak (1 in 64 requests 1 .. 64 MiB, cross-stream 0.3) of the four variants side by
# side (gpu-suite soak), and, beside it on the same host, gpu-suite's tests part: every test binary
# of the bundle (CUDA backend tests included) and the injected faults, 5 s each, every variant must
# exit 1. Correctness only: nothing here is timed. Run from the repository root with .bundle
# carried (bench, the sanitizer demos and multi_gpu_test left out for the 64 MiB limit; on one GPU
# multi_gpu_test only skips).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s); S=.bundle/gpu-suite
export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
(SOAK_SECONDS=300 SOAK_SIZES=mixed timeout 380 bash $S $o soak > /dev/null 2>&1; el soak rc=$?) &
FAULT_SECONDS=5 timeout 300 bash $S $o tests > /dev/null 2>&1; el tests rc=$?
wait
grep -hE 'FAILED|exit=|soak variant|violations|result|tests? ran' $o/tests.log $o/faults.log $o/soak.log | head -80
tar czf $OUT/b.tgz -C $OUT b; el done
