#!/usr/bin/env bash
# GPU call e of 2026-12-03 s15: where does the tls variant's extra memory after lm_train sit in the
# rounds where it exceeds torch-expandable (call c: tls 3421-3543 MiB in all over its rounds, base
# and new alike, stream a steady 3443)? workloads.py lm_train alone (30 steps, as in
# call c) with the plug-in of 592ced1, tls five times and stream twice, alternating, each with
# CUDAPOOL_STATS (the pool's stats at exit: reserved, cached, free extents, epochs).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/e; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
for r in 1 2 3 4 5; do
  for v in tls stream; do
    if [ $v = stream ] && [ $r -gt 2 ]; then continue; fi
    CUDAPOOL_STATS=$o/stats_${v}_r$r.json timeout 60 python3 .bundle/workloads.py --allocator=cudapool \
      --lib=.bundle/lib/libcudapool_torch.so --variant=$v --only-workload=lm_train --steps=30 \
      --out=$o/wl_${v}_r$r.json >> $o/torch.log 2>&1; el $v r$r rc=$?
  done
done
grep -h "MiB over" $o/torch.log
tar czf $OUT/e.tgz -C $OUT e; el done
