#!/usr/bin/env bash
# GPU call a of 2026-12-02 s12: remap that waits for its own stream (151d317). lm_train alone
# (workloads.py, 40 steps), one process per allocator, 3 rounds alternating (the second reversed):
# PyTorch's allocator, PyTorch with expandable segments, the plug-in's defaults (remap_ratio 1.01)
# for tls and lockfree, and tls with CUDAPOOL_REMAP_RATIO=0 (no remap: what the change does not
# touch); every plug-in process with CUDAPOOL_STATS (maps, unmaps, remap_waits).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > $o/gpu.txt 2>&1
run() {  # TAG ROUND
  case $1 in
  torch|torch-expandable) timeout 90 python3 $W --allocator=$1 --only-workload=lm_train --steps=40 --out=$o/wl_$1_r$2.json ;;
  tls|lockfree) CUDAPOOL_STATS=$o/stats_$1_r$2.json timeout 90 python3 $W --allocator=cudapool --lib=$L --variant=$1 \
      --only-workload=lm_train --steps=40 --out=$o/wl_$1_r$2.json ;;
  tls-remap0) CUDAPOOL_REMAP_RATIO=0 CUDAPOOL_STATS=$o/stats_$1_r$2.json timeout 90 python3 $W --allocator=cudapool --lib=$L \
      --variant=tls --only-workload=lm_train --steps=40 --out=$o/wl_$1_r$2.json ;;
  esac >> $o/torch.log 2>&1
  el $1 r$2 rc=$?
}
tags=(torch torch-expandable tls lockfree tls-remap0)
for r in 1 2 3; do
  order=("${tags[@]}"); if (( r % 2 == 0 )); then order=(tls-remap0 lockfree tls torch-expandable torch); fi
  for t in "${order[@]}"; do run $t $r; done
done
tar czf $OUT/a.tgz -C $OUT a; el done
