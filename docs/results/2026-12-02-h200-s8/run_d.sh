#!/usr/bin/env bash
# GPU call d of 2026-12-02 s8: whether this session's change moves the PyTorch plug-in's memory.
# Call a (one process each) found tls with the plug-in's defaults at +2 MiB over torch-expandable
# after lm_train, cnn_varbatch and lm_infer_varseq, where s7's four runs found -18 to -22.
# workloads.py (40 steps, the four workloads) with libcudapool_torch.so of main before the session
# (bf123c3, .bundle/lib/base/) and of this session (.bundle/lib/), alternating, 3 rounds, with
# torch-expandable in rounds 1 and 3. Run from the repository root with .bundle carried.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
left() { [ $(( $(date +%s)-start )) -lt $1 ]; }
W=.bundle/workloads.py
wl() { local name=$1; shift; left 240 || return; CUDAPOOL_STATS=$o/stats_$name.json timeout 40 python3 $W "$@" --steps=40 --out=$o/wl_$name.json >> $o/torch.log 2>&1; el torch $name; }
for r in 1 2 3; do
  [ $r = 2 ] || wl expandable_r$r --allocator=torch-expandable
  wl base_r$r --allocator=cudapool --lib=.bundle/lib/base/libcudapool_torch.so
  wl new_r$r --allocator=cudapool --lib=.bundle/lib/libcudapool_torch.so
done
tar czf $OUT/d.tgz -C $OUT d; el done
