#!/usr/bin/env bash
# GPU call e of 2026-12-02 s11: call d found the excess of some processes in both tls and lockfree,
# with the same peak bytes in use and more unmaps (remap_ratio's moves: 7-28 against 2). Is remap
# the source of the spread? lm_train alone (workloads.py, 40 steps), tls, alternating the plug-in's
# default (remap_ratio 1.01) and CUDAPOOL_REMAP_RATIO=0 (no remap), 4 rounds, with CUDAPOOL_STATS.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/e; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py
for r in 1 2 3 4; do
  for rr in 1.01 0; do
    CUDAPOOL_REMAP_RATIO=$rr CUDAPOOL_STATS=$o/stats_remap${rr}_r$r.json timeout 60 python3 $W --allocator=cudapool \
      --lib=.bundle/lib/libcudapool_torch.so --variant=tls --only-workload=lm_train --steps=40 \
      --out=$o/wl_remap${rr}_r$r.json >> $o/torch.log 2>&1; el remap$rr r$r
  done
done
tar czf $OUT/e.tgz -C $OUT e; el done
