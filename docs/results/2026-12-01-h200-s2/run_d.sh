#!/usr/bin/env bash
# GPU call D: 5-minute stress soaks of every variant side by side with 1..64 MiB requests mixed in.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o
SOAK_SECONDS=300 SOAK_SIZES=mixed timeout 380 bash .bundle/gpu-suite $o soak > /dev/null 2>&1; echo "soak rc=$?"
grep -E "soak variant|variant |ops/s|result|violations|peak live|reserved peak" $o/soak.log | head -40
tar czf $OUT/d.tgz -C $OUT d
