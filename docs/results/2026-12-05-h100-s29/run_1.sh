#!/usr/bin/env bash
# s29 call 1: where s28's ten PyTorch pages came from. PyTorch's lm_train alone (workloads.py, 40
# steps), one process per plug-in: libcudapool_torch.so built (`cmake --preset gpu`, target
# cudapool_torch) at s24's library 218df46, at 63beeb6, 4f44010, 000aeb1, 8eaaa95 (the library
# commits between, .bundle/plugins.tar.xz) and at HEAD (a2c5041's library, .bundle's own), with the
# mutex variant and the plug-in's defaults; PyTorch with expandable segments beside them; then tls
# (s24: 2834 MiB in two rounds, 2948 in one; s28: 2964 in both) three times with HEAD's and s24's.
# Each process writes its stats at exit (CUDAPOOL_STATS).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/a; mkdir -p $o; start=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > $o/gpu.txt 2>&1
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
tar -xJf .bundle/plugins.tar.xz -C .bundle/lib
lib_of() { if [ "$1" = head ]; then echo .bundle/lib/libcudapool_torch.so; else echo .bundle/lib/libcudapool_torch_$1.so; fi; }
w() {  # LABEL ARGS...: one workloads.py process on lm_train, its stats at exit in stats_LABEL.json
  local label=$1; shift
  (( $(date +%s) - start < ${UNTIL:-540} )) || { echo "$label skipped (time)" >> $o/log.txt; return; }
  echo "-- $label" >> $o/log.txt
  CUDAPOOL_STATS=$o/stats_$label.json python3 .bundle/workloads.py --workloads=lm_train --steps=40 --out=$o/w_$label.json "$@" >> $o/log.txt 2>&1
}
w expandable --allocator=torch-expandable
for c in 218df46 63beeb6 4f44010 000aeb1 8eaaa95 head; do
  w mutex_$c --allocator=cudapool --lib=$(lib_of $c) --variant=mutex
done
for r in 1 2 3; do for c in head 218df46; do
  w tls_${c}_r$r --allocator=cudapool --lib=$(lib_of $c) --variant=tls
done; done
for c in head 218df46; do
  w lockfree_$c --allocator=cudapool --lib=$(lib_of $c) --variant=lockfree
done
grep -h "over baseline" $o/log.txt
echo "done $(( $(date +%s) - start ))s" | tee $o/times.txt
tar cJf $OUT/a.tar.xz -C $OUT a
