#!/usr/bin/env bash
# GPU call b of 2026-12-03 s15: gpu-suite's tests part (every test binary of the bundle, the CUDA
# backend's included; the injected faults, 10 s each) beside its soak part (120 s, --sizes=mixed,
# 64 threads x 16 streams, the four variants side by side), all of 592ced1's build; then the
# PyTorch plug-in of 592ced1 (.bundle/lib/libcudapool_torch.so) against the one it starts from
# (.bundle/lib/base/libcudapool_torch.so, 7d1ebca's allocation code) with tls (the default) and
# stream, and PyTorch's allocator with expandable_segments:True: workloads.py lm_train then
# mlp_4stream in one process (30 steps each), one process per allocator, 2 rounds (the second
# reversed).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
S=.bundle/gpu-suite
SOAK_SECONDS=120 SOAK_SIZES=mixed timeout 160 bash $S $o soak > /dev/null 2>&1 &
soak=$!
timeout 150 bash $S $o tests > /dev/null 2>&1; el tests rc=$?
wait $soak; el soak rc=$?
tail -3 $o/soak.log; grep -c PASSED $o/tests.log; grep "exit=" $o/faults.log | sort | uniq -c | head
export LD_LIBRARY_PATH=$PWD/.bundle/lib
W=.bundle/workloads.py
wl() {  # label allocator lib variant round
  case $2 in torch*) timeout 90 python3 $W --allocator=$2 --workloads=lm_train,mlp_4stream --steps=30 --out=$o/wl_$1_r$5.json ;;
  *) timeout 90 python3 $W --allocator=cudapool --lib=$3 --variant=$4 --workloads=lm_train,mlp_4stream --steps=30 --out=$o/wl_$1_r$5.json ;;
  esac >> $o/torch.log 2>&1; el wl $1 r$5 rc=$?; }
N=.bundle/lib/libcudapool_torch.so; B=.bundle/lib/base/libcudapool_torch.so
for r in 1 2; do
  if [ $r = 2 ]; then order="stream base-stream tls base-tls torch-expandable"; else order="torch-expandable base-tls tls base-stream stream"; fi
  for a in $order; do
    case $a in torch-expandable) wl $a torch-expandable - - $r ;; base-*) wl $a cudapool $B ${a#base-} $r ;; *) wl $a cudapool $N $a $r ;; esac
  done
done
tar czf $OUT/b.tgz -C $OUT b; el done
