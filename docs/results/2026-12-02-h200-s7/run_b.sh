#!/usr/bin/env bash
# GPU call b of 2026-12-02 s7, this session's code: gpu-suite's tests part (every test binary of
# the bundle, the CUDA backend's included, and the injected faults, 5 s each: every variant must
# exit 1), then its soak part: a 5-minute `stress --threads=64 --streams=16 --sizes=mixed` soak (1 in
# 64 requests 1 .. 64 MiB) of the four variants side by side. Run from the repository root with
# .bundle carried (bench_base left out, multi_gpu_test too for the 64 MiB limit: on one GPU it only
# skips).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s); S=.bundle/gpu-suite
export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
FAULT_SECONDS=5 timeout 170 bash $S $o tests > /dev/null 2>&1; el tests rc=$?
SOAK_SECONDS=300 SOAK_SIZES=mixed timeout 360 bash $S $o soak > /dev/null 2>&1; el soak rc=$?
grep -hE 'FAILED|exit=|soak variant|violations|result' $o/tests.log $o/faults.log $o/soak.log | head -60
tar czf $OUT/b.tgz -C $OUT b; el done
