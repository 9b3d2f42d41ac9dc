#!/usr/bin/env bash
# GPU call d of 2026-12-03 s15: call a's replay and 1-thread pair A/B again with every process
# pinned to one CPU (taskset -c 14; s13 call a found the single-thread spread to follow the CPU a
# process runs on, and call a's replay rounds here fell into two modes ~1.6x apart): base
# (bench_base, 7d1ebca's allocation code) against new (bench, 592ced1), alternating, 3 rounds (the
# second new first); replay of every trace (stream-ordered and elided, the four variants,
# cudaMallocAsync) and limit/epoch_event at min_time 0.3; pair/tls and pair/stream (4 KiB, 1 thread)
# at 0.2 x 3 repetitions.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1; cat /proc/loadavg >> $o/gpu.txt
T=.bundle/traces
RF='^(replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+(/elided)?/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$'
PF='^pair/(tls|stream)/4096/real_time/threads:1$'
run() {  # binary label filter min_time reps timeout
  timeout $6 taskset -c 14 .bundle/bin/$1 --backend=cuda --traces=$T --benchmark_filter="$3" --benchmark_min_time=$4 \
    --benchmark_repetitions=$5 --benchmark_out=$o/$2.json --benchmark_out_format=json > $o/$2.log 2>&1; el $2 rc=$?; }
for r in 1 2 3; do
  if [ $r = 2 ]; then order="bench bench_base"; else order="bench_base bench"; fi
  for b in $order; do run $b ${b}_replay_r$r "$RF" 0.3 1 100; done
  for b in $order; do run $b ${b}_pair_r$r "$PF" 0.2 3 40; done
done
tar czf $OUT/d.tgz -C $OUT d; el done
