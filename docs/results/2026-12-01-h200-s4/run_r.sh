#!/usr/bin/env bash
# GPU call R (the merged code: heap rules of call Q, the header move, the models, several devices):
# PyTorch with the plug-in (tls, stream) against PyTorch's allocator (with and without expandable
# segments) and cudaMallocAsync, device memory after each workload; serve (every variant, the
# peers, the no-allocator ceiling); the `multi` part on this one-GPU host (its two-GPU steps skip).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/r; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
TORCH_STEPS=60 TORCH_WORKLOAD_STEPS=40 TORCH_REMAP_VARIANTS="" timeout 330 bash .bundle/gpu-suite $o torch tls stream > /dev/null 2>&1; echo "torch rc=$? $(( $(date +%s)-start ))s"
timeout 150 .bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^serve/' --benchmark_repetitions=3 \
  --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true --benchmark_out=$o/serve.json \
  --benchmark_out_format=json > $o/serve.log 2>&1; echo "serve rc=$? $(( $(date +%s)-start ))s"
BENCH_REPS=1 timeout 90 bash .bundle/gpu-suite $o multi mutex tls > /dev/null 2>&1; echo "multi rc=$? $(( $(date +%s)-start ))s"
sed -n '/workloads summary/,/memory:/p' $o/torch.log | head -40
grep -E "identical|differ" $o/torch.log | head -6
grep median $o/serve.log | awk '{print $1, $2, $3, $NF}' | sed 's/real_time_median//' | cut -c1-150 | grep -E "threads:(1|16|64)" | head -60
grep -E "GPUs|PASSED|FAILED|SKIPPED|skipped|exit=|pair_devices" $o/multi.log | head -20
tar czf $OUT/r.tgz -C $OUT r
