#!/usr/bin/env bash
# GPU call c of 2026-12-02 s12: remap that waits for its own stream (151d317) off PyTorch.
# 1. bench replay of every trace, stream-ordered, elided and immediate, for the four variants with
#    the library's defaults (no remap: untouched by the change, the control) and with `-tight` (the
#    plug-in's settings: classes to 64 KiB, remap_ratio 1.01), and cudaMallocAsync; min time 0.5 s.
# 2. stress --remap-ratio=1.01 --sizes=mixed, 64 threads x 16 streams, the four variants side by
#    side for 120 s each on the GPU (device verification of every block).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
B=.bundle/bin
timeout 330 $B/bench --backend=cuda --traces=.bundle/traces \
  --benchmark_filter='^replay/((lockfree|mutex|stream|tls)(-tight)?|cudaMallocAsync)/' --benchmark_min_time=0.5 \
  --benchmark_out=$o/bench.json --benchmark_out_format=json > $o/bench.txt 2> $o/bench.err; el bench rc=$?
for v in mutex lockfree tls stream; do
  timeout 200 $B/stress --variant=$v --backend=cuda --threads=64 --streams=16 --sizes=mixed --remap-ratio=1.01 \
    --duration=120 --quiet --json=$o/stress_remap_$v.json > $o/stress_remap_$v.log 2>&1 &
done
wait; el stress
for v in mutex lockfree tls stream; do echo "$v: $(grep -E 'result|violations' $o/stress_remap_$v.log | tr -s ' ' | tr '\n' ' ')"; done | tee -a $o/times.txt
tar czf $OUT/c.tgz -C $OUT c; el done
