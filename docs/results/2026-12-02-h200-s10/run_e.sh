#!/usr/bin/env bash
# GPU call e of 2026-12-02 s10: call d's replay A/B again after the fix it led to (the large path's
# look for a tighter fit behind another stream's epoch only once several streams have freed into
# the heap): bench at b6aad85 (old) against the fixed code (new), alternating processes, 3 rounds,
# replay of mlp_4stream and lm_train (stream-ordered, BENCH_MIN_TIME 0.5, 3 repetitions).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/e; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
for r in 1 2 3; do
  for which in old new; do
    b=.bundle/bin/bench; [ $which = old ] && b=.bundle/bin/bench_old
    timeout 60 $b --backend=cuda --traces=.bundle/traces \
      --benchmark_filter='^replay/(mutex|lockfree|tls|stream)/(mlp_4stream|lm_train)/real_time$' \
      --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out=$o/replay_${which}_r$r.json --benchmark_out_format=json > /dev/null 2>&1; el replay $which r$r rc=$?
  done
done
tar czf $OUT/e.tgz -C $OUT e; el done
