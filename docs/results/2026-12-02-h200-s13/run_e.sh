#!/usr/bin/env bash
# GPU call e of 2026-12-03 s13: does the tls variant's extra memory in PyTorch (call c: 47 MiB more
# than the other variants after lm_train in the process that runs the four workloads) sit in its
# thread caches? workloads.py (the four workloads, 40 steps each) with the plug-in's tls, three
# settings of CUDAPOOL_TLS_CACHE_BYTES (what all thread caches together may hold: the library's
# 256 MiB default, 4 MiB, 0 = no thread caches), one process each, 3 rounds alternating (the second
# reversed), each with CUDAPOOL_STATS. The bundle: the plug-in built from this commit only.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/e; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
for r in 1 2 3; do
  if [ $r = 2 ]; then order="0 4m 256m"; else order="256m 4m 0"; fi
  for c in $order; do
    CUDAPOOL_TLS_CACHE_BYTES=$c CUDAPOOL_STATS=$o/stats_${c}_r$r.json timeout 60 python3 .bundle/workloads.py --allocator=cudapool \
      --lib=.bundle/lib/libcudapool_torch.so --variant=tls --steps=40 --out=$o/wl_${c}_r$r.json >> $o/torch.log 2>&1; el cache=$c r$r rc=$?
  done
done
tar czf $OUT/e.tgz -C $OUT e; el done
