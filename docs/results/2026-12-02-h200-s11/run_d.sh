#!/usr/bin/env bash
# GPU call d of 2026-12-02 s11: why the tls variant holds 70-80 MiB more than the others after
# lm_train in some processes (call c: 2910 and 2918 MiB over the baseline against 2828-2850;
# s10: -12 and +84 against torch-expandable; s10 d2: 2830 in three processes). lm_train alone
# (workloads.py, 40 steps) with the plug-in, tls in five processes and lockfree in two,
# alternating, each with CUDAPOOL_STATS (the pool's stats at exit: heap, slabs, classes).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py
for r in 1 2 3 4 5; do
  for v in tls lockfree; do
    [ $v = lockfree ] && [ $r -gt 2 ] && continue
    CUDAPOOL_STATS=$o/stats_${v}_r$r.json timeout 60 python3 $W --allocator=cudapool --lib=.bundle/lib/libcudapool_torch.so \
      --variant=$v --only-workload=lm_train --steps=40 --out=$o/wl_${v}_r$r.json >> $o/torch.log 2>&1; el $v r$r
  done
done
tar czf $OUT/d.tgz -C $OUT d; el done
