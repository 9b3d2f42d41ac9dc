#!/usr/bin/env bash
# GPU call L: 5-minute mixed-size soaks of every variant side by side (the final code), and a
# training loop through cudapool.torch.enable() with memory_stats() every 50 steps (issue 17).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/l; mkdir -p $o; start=$(date +%s)
CUDAPOOL_TORCH_LIB=$PWD/.bundle/lib/libcudapool_torch.so CUDAPOOL_STATS=$o/enable_stats.json PYTHONPATH=$PWD/python \
  timeout 120 python3 docs/results/2026-12-01-h200-s3/enable_check.py > $o/enable.log 2>&1; echo "enable rc=$? $(( $(date +%s)-start ))s"
tail -30 $o/enable.log
python3 -c "
import json; d=json.load(open('$o/enable_stats.json')); s=d['devices'][0]['stats'] if 'devices' in d else d
print('CUDAPOOL_STATS at exit: reserved', s.get('reserved_bytes'), 'peak_in_use', s.get('peak_in_use_bytes'), 'variant', s.get('variant'))" 2>&1 | tail -2
SOAK_SECONDS=300 SOAK_SIZES=mixed timeout 380 bash .bundle/gpu-suite $o soak > /dev/null 2>&1; echo "soak rc=$? $(( $(date +%s)-start ))s"
grep -E "soak variant|variant |ops/s|result|violations|reserved" $o/soak.log | head -40
tar czf $OUT/l.tgz -C $OUT l
