#!/usr/bin/env bash
# GPU call f of 2026-12-03 s15: is the stream variant's replay slower with this session's code?
# (calls a and d: its minimum over six processes 12-34% above base's on the four one-stream traces,
# while mutex, lockfree and tls were 5-8% below, and the dev machine's sim A/B has it 3-5% faster.)
# base against new, pinned to CPU 14, alternating, 5 rounds (even rounds new first): replay/stream
# of every trace, stream-ordered and elided, and replay/lockfree/lm_train as the control, at
# min_time 0.3.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/f; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
RF='^replay/(stream/[a-z_0-9]+(/elided)?|lockfree/lm_train)/real_time$'
for r in 1 2 3 4 5; do
  if [ $((r % 2)) = 0 ]; then order="bench bench_base"; else order="bench_base bench"; fi
  for b in $order; do
    timeout 60 taskset -c 14 .bundle/bin/$b --backend=cuda --traces=.bundle/traces --benchmark_filter="$RF" \
      --benchmark_min_time=0.3 --benchmark_out=$o/${b}_replay_r$r.json --benchmark_out_format=json > $o/${b}_r$r.log 2>&1
    el $b r$r rc=$?
  done
done
tar czf $OUT/f.tgz -C $OUT f; el done
