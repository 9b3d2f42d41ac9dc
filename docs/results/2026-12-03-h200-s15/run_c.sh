#!/usr/bin/env bash
# GPU call c of 2026-12-03 s15: call b's PyTorch part again, its base library found this time (call
# b named it wrongly, so its base-* processes failed): workloads.py lm_train then mlp_4stream in one
# process (30 steps each), the plug-in of 592ced1 against 7d1ebca's with tls and stream, and
# PyTorch's allocator with expandable_segments:True, one process per allocator, 3 rounds (the
# second reversed).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/c; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.bundle/lib
W=.bundle/workloads.py
wl() {  # label allocator lib variant round
  case $2 in torch*) timeout 90 python3 $W --allocator=$2 --workloads=lm_train,mlp_4stream --steps=30 --out=$o/wl_$1_r$5.json ;;
  *) timeout 90 python3 $W --allocator=cudapool --lib=$3 --variant=$4 --workloads=lm_train,mlp_4stream --steps=30 --out=$o/wl_$1_r$5.json ;;
  esac >> $o/torch.log 2>&1; el wl $1 r$5 rc=$?; }
N=.bundle/lib/libcudapool_torch.so; B=.bundle/lib/base/libcudapool_torch.so
for r in 1 2 3; do
  if [ $r = 2 ]; then order="stream base-stream tls base-tls torch-expandable"; else order="torch-expandable base-tls tls base-stream stream"; fi
  for a in $order; do
    case $a in torch-expandable) wl $a torch-expandable - - $r ;; base-*) wl $a cudapool $B ${a#base-} $r ;; *) wl $a cudapool $N $a $r ;; esac
  done
done
grep -h "MiB over" $o/torch.log | head -40
tar czf $OUT/c.tgz -C $OUT c; el done
