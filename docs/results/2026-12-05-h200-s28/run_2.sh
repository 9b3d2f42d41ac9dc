#!/usr/bin/env bash
# NOT RUN in s28: the first try was taken back mid-call (407 s of device time lost), later starts
# found no machine, and at 15:00 UTC the 409 s left were too little to start one. Kept as planned.
# s28 call 2, the last (the device was taken back during this call's first try, and a refused start
# followed: 589 s of device time were left for one call). Each part is packed into $OUT as it ends,
# so a call cut by the lease keeps what finished:
#  1. gpu-suite's serve part, rounds while they fit SERVE_UNTIL s (default 240): every allocator in
#     its own processes, the order rotating; small and mixed at 1, 16 and 64 threads; the four
#     variants, tls-mr, cudaMallocAsync, cub and none -> serve.tar.xz;
#  2. the bench part in two filters: pair/4096 and prodcons at the suite's 0.1 s; limit/epoch_event
#     and limit/stack at 0.5 s -> bench.tar.xz;
#  3. the soak part (SOAK s, default 60; --sizes=mixed, 64 threads x 16 streams, the four variants
#     side by side) beside the tests part (every test binary, then the eight injected faults at
#     FAULT_SECONDS=5 each), both cut at SOAK + 40 s; the sanitizer part; the peers (8 s each)
#     -> a.tar.xz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
start=$(date +%s); S=.bundle/gpu-suite; T=${SOAK:-60}
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $OUT/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > $OUT/gpu.txt 2>&1
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .bundle/bin.tar.xz .bundle
o=$OUT/b; mkdir -p $o
PART_DEADLINE=$(( start + ${SERVE_UNTIL:-240} )) timeout $(( ${SERVE_UNTIL:-240} + 15 )) bash $S $o serve > /dev/null 2>&1; el serve rc=$?
tail -3 $o/serve.log; tar cJf $OUT/serve.tar.xz -C $OUT b && rm -rf $o
o=$OUT/bench; mkdir -p $o
BENCH_FILTER='^(pair/[a-zA-Z]+/4096|prodcons/[a-zA-Z]+)/real_time/threads:[0-9]+$' \
  timeout 90 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_MIN_TIME=0.5 BENCH_FILTER='^(limit/epoch_event/real_time|limit/stack/real_time/threads:1)$' \
  timeout 25 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench.json $o/b1/bench.json $o/b2/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log > $o/bench.log; rm -rf $o/b1 $o/b2
tar cJf $OUT/bench.tar.xz -C $OUT bench && rm -rf $o
o=$OUT/a; mkdir -p $o
SOAK_SECONDS=$T SOAK_SIZES=mixed timeout $(( T + 40 )) bash $S $o soak > /dev/null 2>&1 &
soak=$!
FAULT_SECONDS=5 timeout $(( T + 40 )) bash $S $o tests > /dev/null 2>&1; el tests rc=$?
wait $soak; el soak rc=$?
tar cJf $OUT/a.tar.xz -C $OUT a
timeout 20 bash $S $o sanitizer > /dev/null 2>&1; el sanitizer rc=$?
PEER_SECONDS=8 timeout 25 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
tail -3 $o/soak.log; grep -c PASSED $o/tests.log; grep "exit=" $o/faults.log | sort | uniq -c
tar cJf $OUT/a.tar.xz -C $OUT a && rm -rf $o; el done
