#!/usr/bin/env bash
# GPU call b of 2026-12-02 s8, this session's code: a 5-minute `stress --threads=64 --streams=16
# --sizes=mixed` soak (1 in 64 requests 1 .. 64 MiB, cross-stream 0.3) of the four variants side by
# side (gpu-suite soak), and, beside it on the same host, gpu-suite's tests part (every test binary
# of the bundle, CUDA backend tests included, and the injected faults, 5 s each: every variant must
# exit 1). Then the PyTorch step time of lm_train, interleaved: workloads.py --workloads=lm_train
# --steps=100, torch, torch-expandable and the plug-in (its defaults: tls) in turn, 3 rounds, one
# process each. Run from the repository root with .bundle carried (bench_base and multi_gpu_test
# left out for the 64 MiB limit; on one GPU multi_gpu_test only skips).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o; start=$(date +%s); S=.bundle/gpu-suite
export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
left() { [ $(( $(date +%s)-start )) -lt $1 ]; }
(SOAK_SECONDS=300 SOAK_SIZES=mixed timeout 380 bash $S $o soak > /dev/null 2>&1; el soak rc=$?) &
FAULT_SECONDS=5 timeout 300 bash $S $o tests > /dev/null 2>&1; el tests rc=$?
wait
grep -hE 'FAILED|exit=|soak variant|violations|result|tests? ran' $o/tests.log $o/faults.log $o/soak.log | head -80
W=.bundle/workloads.py; L=.bundle/lib/libcudapool_torch.so
wl() { local name=$1; shift; left 570 || return; timeout 40 python3 $W "$@" --workloads=lm_train --steps=100 --out=$o/lm_$name.json >> $o/torch.log 2>&1; el torch $name; }
for r in 1 2 3; do
  wl torch_r$r --allocator=torch
  wl torch-expandable_r$r --allocator=torch-expandable
  wl cudapool-tls_r$r --allocator=cudapool --lib=$L
done
tar czf $OUT/b.tgz -C $OUT b; el done
