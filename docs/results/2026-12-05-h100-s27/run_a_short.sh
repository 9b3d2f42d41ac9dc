#!/usr/bin/env bash
# s27 call a as run (the lease had 184 s left after calls c and b; run_a.sh needs about 420 s):
# gpu-suite's soak part (90 s, --sizes=mixed, 64 threads x 16 streams, the four variants side by
# side) beside its tests part, both cut at 110 s (every test binary finished; the last injected
# fault, stream double-handout, was cut), then sanitizer and peers (8 s per peer).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1; o=$OUT/a; mkdir -p $o; s=$(date +%s); S=.bundle/gpu-suite; nvidia-smi --query-gpu=name,driver_version --format=csv > $o/gpu.txt; SOAK_SECONDS=90 SOAK_SIZES=mixed timeout 110 bash $S $o soak >/dev/null 2>&1 & timeout 110 bash $S $o tests >/dev/null 2>&1; echo tests rc=$? $(( $(date +%s)-s ))s | tee -a $o/times.txt; wait; echo soak $(( $(date +%s)-s ))s | tee -a $o/times.txt; timeout 20 bash $S $o sanitizer >/dev/null 2>&1; echo san rc=$? | tee -a $o/times.txt; PEER_SECONDS=8 timeout 25 bash $S $o peers >/dev/null 2>&1; echo peers rc=$? $(( $(date +%s)-s ))s | tee -a $o/times.txt; tail -3 $o/soak.log; grep -c PASSED $o/tests.log; tar cJf $OUT/a.tar.xz -C $OUT a
