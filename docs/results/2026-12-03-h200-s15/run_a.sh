#!/usr/bin/env bash
# GPU call a of 2026-12-03 s15: this session's bench (.bundle/bin/bench, 592ced1: lock-free marks,
# shard skipping, range epochs closed before growth only) side by side with the bench of the code it
# starts from (.bundle/bin/bench_base: the allocation code of 7d1ebca, built in s14), each in its own
# processes, alternating base/new (round 2 new first): replay of every trace (stream-ordered and
# elided, the four variants, cudaMallocAsync) with limit/epoch_event at min_time 0.3, 3 rounds;
# pair/tls and pair/stream (4 KiB, 1 and 16 threads) at 0.2 x 3 repetitions, 3 rounds; serve small
# and mixed at 16 and 64 threads (the pools and both peers) at 0.5, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1; cat /proc/loadavg >> $o/gpu.txt
T=.bundle/traces
RF='^(replay/(mutex|lockfree|tls|stream)/[a-z_0-9]+(/elided)?/real_time|replay/cudaMallocAsync/[a-z_0-9]+/real_time|limit/epoch_event/real_time)$'
PF='^pair/(tls|stream)/4096/real_time/threads:(1|16)$'
SF='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub)/(small|mixed)/real_time/threads:(16|64)$'
run() {  # binary label filter min_time reps timeout
  timeout $6 .bundle/bin/$1 --backend=cuda --traces=$T --benchmark_filter="$3" --benchmark_min_time=$4 \
    --benchmark_repetitions=$5 --benchmark_out=$o/$2.json --benchmark_out_format=json > $o/$2.log 2>&1; el $2 rc=$?; }
for r in 1 2 3; do
  if [ $r = 2 ]; then order="bench bench_base"; else order="bench_base bench"; fi
  for b in $order; do run $b ${b}_replay_r$r "$RF" 0.3 1 100; done
  for b in $order; do run $b ${b}_pair_r$r "$PF" 0.2 3 40; done
done
for r in 1 2; do
  if [ $r = 2 ]; then order="bench bench_base"; else order="bench_base bench"; fi
  for b in $order; do run $b ${b}_serve_r$r "$SF" 0.5 1 80; done
done
tar czf $OUT/a.tgz -C $OUT a; el done
