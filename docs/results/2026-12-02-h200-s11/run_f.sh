#!/usr/bin/env bash
# GPU call f of 2026-12-02 s11: call a's A/B of the tls change again with more rounds (its 3 gave
# 1.076 at 16 threads and 0.929 at 64, inside the spread): serve/tls and serve/lockfree small at 16
# and 64 threads, bench_old (1ac490b) and bench (this session's library) alternating in fresh
# processes, 5 rounds, the first binary of each round alternating too.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/f; mkdir -p $o/ab; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
for r in 1 2 3 4 5; do
  order="bench_old bench"; [ $((r % 2)) = 0 ] && order="bench bench_old"
  for b in $order; do
    for v in tls lockfree; do
      timeout 30 .bundle/bin/$b --backend=cuda --traces= --benchmark_min_time=0.5 \
        --benchmark_filter="^serve/$v/small/real_time/threads:(16|64)$" \
        --benchmark_out=$o/ab/${b}_${v}_$r.json --benchmark_out_format=json > /dev/null 2>&1
    done
  done
  el round $r
done
tar czf $OUT/f.tgz -C $OUT f; el done
