#!/usr/bin/env bash
# GPU call d of 2026-12-03 s17 (part 4 of 4): gpu-suite's bench part for serve alone: the four
# variants, tls-mr, lockfree-chunks (segments from cudaMalloc), cudaMallocAsync, cub and serve/none (the ceiling), small and mixed, 1, 16 and 64
# threads, BENCH_MIN_TIME=0.5 with BENCH_REPS=9 (s16 ran 3) in random interleaving: a serve point
# moves 5-10% between repetitions on this host (s16's medians of 3 put tls and stream at 0.85x
# lockfree at 16 threads, where earlier runs ordered them otherwise), so 9 give medians to compare.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
BENCH_MIN_TIME=0.5 BENCH_REPS=${REPS:-9} BENCH_INTERLEAVE=1 BENCH_FILTER='^serve/(mutex|lockfree|tls|stream|cudaMallocAsync|cub|tls-mr|none|lockfree-chunks)/(small|mixed)/real_time/threads:(1|16|64)$' \
  timeout ${LIMIT:-520} bash .bundle/gpu-suite $o bench > /dev/null 2>&1; el serve rc=$?
mv $o/bench.json $o/bench_d.json; mv $o/bench.log $o/bench_d.log
tar czf $OUT/d.tgz -C $OUT d; el done
