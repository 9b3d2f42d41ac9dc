#!/usr/bin/env bash
# GPU call d of 2026-12-02 s10: this session's library changes (ef7dce5 the large path's tighter fit
# behind another stream's epoch, c2ab69a, 8c1749d) against the session's start (b6aad85, whose
# bench and libcudapool_torch.so were built from a worktree: bench_old, libcudapool_torch_old.so),
# side by side, alternating processes, 3 rounds: replay of mlp_4stream and lm_train (stream-ordered,
# BENCH_MIN_TIME 0.5, 3 repetitions) for the four variants; lm_train alone (workloads.py, 40 steps)
# with PyTorch's allocator and the plug-in (tls, its defaults) old and new, with CUDAPOOL_STATS.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT/d; mkdir -p $o; start=$(date +%s); export LD_LIBRARY_PATH=$PWD/.bundle/lib
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
W=.bundle/workloads.py
for r in 1 2 3; do
  for which in old new; do
    b=.bundle/bin/bench; [ $which = old ] && b=.bundle/bin/bench_old
    timeout 60 $b --backend=cuda --traces=.bundle/traces \
      --benchmark_filter='^replay/(mutex|lockfree|tls|stream)/(mlp_4stream|lm_train)/real_time$' \
      --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out=$o/replay_${which}_r$r.json --benchmark_out_format=json > /dev/null 2>&1; el replay $which r$r rc=$?
  done
  timeout 40 python3 $W --allocator=torch --only-workload=lm_train --steps=40 --out=$o/wl_torch_r$r.json >> $o/torch.log 2>&1; el torch r$r
  for which in old new; do
    lib=.bundle/lib/libcudapool_torch.so; [ $which = old ] && lib=.bundle/lib/libcudapool_torch_old.so
    CUDAPOOL_STATS=$o/stats_${which}_r$r.json timeout 40 python3 $W --allocator=cudapool --lib=$lib --variant=tls \
      --only-workload=lm_train --steps=40 --out=$o/wl_${which}_r$r.json >> $o/torch.log 2>&1; el tls $which r$r
  done
done
tar czf $OUT/d.tgz -C $OUT d; el done
