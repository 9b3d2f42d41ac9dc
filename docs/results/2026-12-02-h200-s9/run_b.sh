#!/usr/bin/env bash
# GPU call b of 2026-12-02 s9 (part 2 of 3): gpu-suite's soak part (5 minutes, --sizes=mixed,
# 64 threads x 16 streams, the four variants side by side) beside its tests part (every test binary
# of the bundle; the injected faults, 10 s each); then its sanitizer part. Bundle without bench,
# multi_gpu_test, replay_memory_test, trace_test (host-only, run by CI) and the PyTorch files, for
# the 64 MiB limit.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
S=.bundle/gpu-suite
SOAK_SECONDS=300 SOAK_SIZES=mixed timeout 340 bash $S $o soak > /dev/null 2>&1 &
soak=$!
timeout 300 bash $S $o tests > /dev/null 2>&1; el tests rc=$?
wait $soak; el soak rc=$?
timeout 150 bash $S $o sanitizer > /dev/null 2>&1; el sanitizer rc=$?
tail -3 $o/soak.log; grep -c PASSED $o/tests.log; grep "exit=" $o/faults.log | sort | uniq -c | head
tar czf $OUT/b.tgz -C $OUT b; el done
