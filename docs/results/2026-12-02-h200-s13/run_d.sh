#!/usr/bin/env bash
# GPU call d of 2026-12-02 s13: is call c's step-time gap noise? train_compare.py (100 steps, the
# library's default variant against PyTorch's allocator) and workloads.py lm_train alone (40 steps:
# torch, torch-expandable, the plug-in with tls, lockfree, mutex, stream), one process each,
# alternating in 3 rounds (the second reversed), the plug-in's defaults.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
tc() { if [ $1 = torch ]; then timeout 60 python3 .bundle/train_compare.py --allocator=torch --steps=100 --out=$o/tc_torch_r$2.json
       else timeout 60 python3 .bundle/train_compare.py --allocator=cudapool --lib=$L --steps=100 --out=$o/tc_cudapool_r$2.json; fi >> $o/torch.log 2>&1; el tc $1 r$2; }
wl() { case $1 in torch*) timeout 60 python3 $W --allocator=$1 --only-workload=lm_train --steps=40 --out=$o/wl_$1_r$2.json ;;
       *) timeout 60 python3 $W --allocator=cudapool --lib=$L --variant=$1 --only-workload=lm_train --steps=40 --out=$o/wl_$1_r$2.json ;; esac >> $o/torch.log 2>&1; el wl $1 r$2; }
for r in 1 2 3; do
  if [ $r = 2 ]; then order="stream mutex lockfree tls torch-expandable torch"; else order="torch torch-expandable tls lockfree mutex stream"; fi
  tc torch $r; tc cudapool $r
  for a in $order; do wl $a $r; done
done
tar czf $OUT/d.tgz -C $OUT d; el done
