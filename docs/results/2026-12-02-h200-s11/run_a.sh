#!/usr/bin/env bash
# GPU call a of 2026-12-02 s11 (the final code's GPU-suite run, part 1 of 3), from the repository
# root after .ci/gpu-bundle with .bundle carried (binaries gzipped; test binaries, sanitizer demos
# and the PyTorch library left out for the 64 MiB limit), and bench_old (03b5f38^ = 1ac490b, the
# s10 library) beside bench. gpu-suite's bench part in three filters merged by s9's merge_bench.py:
# pair/4096 and prodcons at the suite's 0.1 s; replay (stream-ordered, new: /elided, immediate, the
# -tight labels, cudaMallocAsync) and limit/epoch_event at BENCH_MIN_TIME=0.5; serve at 0.5 with
# the repetitions in random order. Then the A/B of the tls change (03b5f38: the idle pass before
# growth): serve/tls and serve/lockfree small at 16 and 64 threads, bench_old and bench alternating
# in fresh processes, 3 rounds. Then gpu-suite's peers part (20 s per peer).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S=.bundle/gpu-suite
BENCH_FILTER='^(pair/[a-zA-Z]+/4096|prodcons/[a-zA-Z]+)/real_time/threads:[0-9]+$' \
  timeout 100 bash $S $o/b1 bench > /dev/null 2>&1; el bench1 rc=$?
BENCH_MIN_TIME=0.5 BENCH_FILTER='^(replay/(mutex|lockfree|tls|stream)(-tight)?/[a-z_0-9]+/real_time|replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+/(elided|immediate)/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$' \
  timeout 260 bash $S $o/b2 bench > /dev/null 2>&1; el bench2 rc=$?
BENCH_MIN_TIME=0.5 BENCH_INTERLEAVE=1 BENCH_FILTER='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub|tls-mr)/(small|mixed)/real_time/threads:(1|16|64)$' \
  timeout 150 bash $S $o/b3 bench > /dev/null 2>&1; el bench3 rc=$?
python3 docs/results/2026-12-02-h200-s9/merge_bench.py $o/bench.json $o/b1/bench.json $o/b2/bench.json $o/b3/bench.json; el merge rc=$?
cat $o/b1/bench.log $o/b2/bench.log $o/b3/bench.log > $o/bench.log; rm -rf $o/b1 $o/b2 $o/b3
export LD_LIBRARY_PATH=$PWD/.bundle/lib:${LD_LIBRARY_PATH:-}
mkdir -p $o/ab
for r in 1 2 3; do
  for b in bench_old bench; do
    for v in tls lockfree; do
      timeout 30 .bundle/bin/$b --backend=cuda --traces= --benchmark_min_time=0.5 \
        --benchmark_filter="^serve/$v/small/real_time/threads:(16|64)$" \
        --benchmark_out=$o/ab/${b}_${v}_$r.json --benchmark_out_format=json > /dev/null 2>&1
    done
  done
done; el ab rc=$?
PEER_SECONDS=20 timeout 70 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
tar czf $OUT/a.tgz -C $OUT a; el done
