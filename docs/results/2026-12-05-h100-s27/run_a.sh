#!/usr/bin/env bash
# s27 call a (SOAK seconds of soak, default 300; one GPU-suite run of library e8cdc15, part 1 of 3), from the repository root after
# `bash .ci/gpu-bundle` with .bundle carried: gpu-suite's soak part (5 minutes, --sizes=mixed,
# 64 threads x 16 streams, the four variants side by side) beside its tests part (every test binary
# of the bundle; the injected faults), then sanitizer, peers (20 s per peer), and the bench part in
# two filters: pair/4096 and prodcons at the suite's 0.1 s; limit/epoch_event and limit/stack at 0.5 s.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > $o/gpu.txt 2>&1
S=.bundle/gpu-suite
# Unpack the bundle once here: the soak and the tests start together and would both unpack it.
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .bundle/bin.tar.xz .bundle
SOAK_SECONDS=${SOAK:-300} SOAK_SIZES=mixed timeout $(( ${SOAK:-300} + 40 )) bash $S $o soak > /dev/null 2>&1 &
soak=$!
timeout 300 bash $S $o tests > /dev/null 2>&1; el tests rc=$?
wait $soak; el soak rc=$?
timeout 60 bash $S $o sanitizer > /dev/null 2>&1; el sanitizer rc=$?
PEER_SECONDS=20 timeout 70 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
BENCH_FILTER='^(pair/[a-zA-Z]+/4096|prodcons/[a-zA-Z]+)/real_time/threads:[0-9]+$' \
  timeout 90 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_MIN_TIME=0.5 BENCH_FILTER='^(limit/epoch_event/real_time|limit/stack/real_time/threads:1)$' \
  timeout 40 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench.json $o/b1/bench.json $o/b2/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log > $o/bench.log; rm -rf $o/b1 $o/b2
tail -3 $o/soak.log; grep -c PASSED $o/tests.log; grep "exit=" $o/faults.log | sort | uniq -c | head
tar cJf $OUT/a.tar.xz -C $OUT a; el done
