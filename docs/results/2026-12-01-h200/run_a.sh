#!/usr/bin/env bash
# GPU call A: tests + faults, a mixed-size soak of every variant side by side, the replay and pair benchmarks.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o
start=$(date +%s)
FAULT_SECONDS=3 timeout 250 bash .bundle/gpu-suite $o tests > $o/tests_console.log 2>&1; echo "tests rc=$? $(( $(date +%s)-start ))s"
SOAK_SECONDS=90 SOAK_SIZES=mixed timeout 130 bash .bundle/gpu-suite $o soak > /dev/null 2>&1; echo "soak rc=$? $(( $(date +%s)-start ))s"
BENCH_FILTER='^replay/|^pair/(tls|stream|mutex|lockfree)/4096/real_time/threads:(1|16)$' BENCH_REPS=3 timeout 150 bash .bundle/gpu-suite $o bench > /dev/null 2>&1; echo "bench rc=$? $(( $(date +%s)-start ))s"
grep -E "PASSED|FAILED|inject=" $o/tests.log | head -40
grep -E "soak variant|result|violations|peak live|reserved peak" $o/soak.log | head -30
grep -E "^replay|^pair" $o/bench.log | grep -E "median" | cut -c1-250
rm -f $o/tests_console.log
tar czf $OUT/a.tgz -C $OUT a
