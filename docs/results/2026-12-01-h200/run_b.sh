#!/usr/bin/env bash
# GPU call B: PyTorch workloads per allocator (device memory, step time), traces recorded under cudapool, replayed.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/b; mkdir -p $o $OUT/traces
start=$(date +%s)
TORCH_STEPS=60 TORCH_WORKLOAD_STEPS=25 TORCH_TRACE_DIR=$OUT/traces timeout 430 bash .bundle/gpu-suite $o torch tls stream > /dev/null 2>&1; echo "torch rc=$? $(( $(date +%s)-start ))s"
grep -vE "^\s*$" $o/torch.log | tail -45
ls -la $OUT/traces
export LD_LIBRARY_PATH=$PWD/.bundle/lib
timeout 120 .bundle/bin/bench --backend=cuda --traces=$OUT/traces --benchmark_filter='^replay/' --benchmark_min_time=0.1 \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out=$o/replay_recorded.json --benchmark_out_format=json > $o/replay_recorded.log 2>&1
echo "replay rc=$? $(( $(date +%s)-start ))s"
grep median $o/replay_recorded.log | cut -c1-250
tar czf $OUT/b.tgz -C $OUT b traces
