#!/usr/bin/env bash
# GPU call d2 of 2026-12-02 s10: call d's lm_train part again (its workloads.py runs failed: the
# bundle lacked train_compare.py, which workloads.py imports): lm_train alone (workloads.py, 40
# steps) with PyTorch's allocator and the plug-in (tls, its defaults) at b6aad85 (old) and at this
# session's code (new), alternating processes, 3 rounds, with CUDAPOOL_STATS.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d2; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py
for r in 1 2 3; do
  timeout 40 python3 $W --allocator=torch --only-workload=lm_train --steps=40 --out=$o/wl_torch_r$r.json >> $o/torch.log 2>&1; el torch r$r
  for which in old new; do
    lib=.bundle/lib/libcudapool_torch.so; [ $which = old ] && lib=.bundle/lib/libcudapool_torch_old.so
    CUDAPOOL_STATS=$o/stats_${which}_r$r.json timeout 40 python3 $W --allocator=cudapool --lib=$lib --variant=tls \
      --only-workload=lm_train --steps=40 --out=$o/wl_${which}_r$r.json >> $o/torch.log 2>&1; el tls $which r$r
  done
done
tar czf $OUT/d2.tgz -C $OUT d2; el done
