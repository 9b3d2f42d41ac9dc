#!/usr/bin/env bash
# GPU call I: PyTorch, every variant (tls also with remap_ratio 1.05), PyTorch's allocator with and
# without expandable segments, cudaMallocAsync; step time and process device memory per workload.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/i; mkdir -p $o; start=$(date +%s)
TORCH_STEPS=60 TORCH_WORKLOAD_STEPS=40 TORCH_REMAP_VARIANTS="tls" timeout 560 bash .bundle/gpu-suite $o torch mutex lockfree tls stream > /dev/null 2>&1; echo "torch rc=$? $(( $(date +%s)-start ))s"
sed -n '/workloads summary/,/memory:/p' $o/torch.log
grep -E "identical|differ|median" $o/torch.log | head -12
tar czf $OUT/i.tgz -C $OUT i
