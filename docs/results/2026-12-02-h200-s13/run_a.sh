#!/usr/bin/env bash
# GPU call a of 2026-12-02 s13 (the final code's GPU-suite run, part 1 of 3), from the repository
# root after .ci/gpu-bundle with .bundle carried (bench and stress gzipped; the tests, sanitizer
# demos and the PyTorch library left out for the 64 MiB limit). gpu-suite's bench part in three
# filters merged by s9's merge_bench.py: pair/4096 and prodcons at the suite's 0.1 s; replay
# (stream-ordered, elided, immediate, the -tight labels, cudaMallocAsync) and limit/epoch_event at
# BENCH_MIN_TIME=0.5; serve at 0.5 with the repetitions in random order. Then gpu-suite's peers
# part (20 s per peer). s11's run_a.sh without its A/B.
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
PEER_SECONDS=20 timeout 70 bash $S $o peers > /dev/null 2>&1; el peers rc=$?
# The single-thread spread by CPU and over time (issue 15): the host's state (topology, load,
# interrupts), then one process pinned to each CPU and 6 free processes, each running pair/tls,
# pair/lockfree (1 thread, 4 KiB) and limit/stack (no pool) 10 (pinned) or 20 (free) times x 0.05 s
# in random order, every repetition kept.
export LD_LIBRARY_PATH=$PWD/.bundle/lib; mkdir -p $o/il
{ lscpu -e; cat /proc/loadavg; top -bn1 | head -25; } > $o/il/host.txt 2>&1; cp /proc/interrupts $o/il/irq_before.txt
il() { "${@:3}" timeout 20 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^(pair/(tls|lockfree)/4096/real_time/threads:1|limit/stack/real_time/threads:1)$' \
  --benchmark_min_time=0.05 --benchmark_repetitions=$2 --benchmark_enable_random_interleaving=true \
  --benchmark_out=$o/il/$1.json --benchmark_out_format=json > /dev/null 2> $o/il/$1.err; }
for c in $(seq 0 $(( $(nproc) - 1 ))); do il cpu_$c 10 taskset -c $c; done
for i in 1 2 3 4 5 6; do il free_$i 20; done
cp /proc/interrupts $o/il/irq_after.txt; el spread_il
tar czf $OUT/a.tgz -C $OUT a; el done
