#!/usr/bin/env bash
# GPU call b of 2026-12-03 s16 (part 2 of 3): s9's run_b.sh (gpu-suite's soak part, 5 minutes,
# --sizes=mixed, 64 threads x 16 streams, the four variants side by side, beside its tests part;
# then its sanitizer part). Then pinned/: replay on a fast and a slow CPU of the host. s13 found the
# host's CPUs in two states (a plain stack, limit/stack, 1.2-1.3x slower on the slow ones, the pools
# 1.8-2x), so unpinned medians mix the two: limit/stack (no pool) 3 x 0.05 s on each CPU picks the
# fastest and the slowest, then the stream-ordered replays of the four variants and
# cudaMallocAsync, 3 x 0.5 s, pinned (taskset) to each of the two.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
bash docs/results/2026-12-02-h200-s9/run_b.sh
o=$OUT/b; start=$(date +%s)
el() { echo "$* $(( $(date +%s)-start ))s" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.bundle/lib; mkdir -p $o/pinned
for c in $(seq 0 $(( $(nproc) - 1 ))); do
  timeout 20 taskset -c $c .bundle/bin/bench --backend=cuda --traces= --benchmark_filter='^limit/stack/real_time/threads:1$' \
    --benchmark_min_time=0.05 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$o/pinned/stack_cpu$c.json --benchmark_out_format=json > /dev/null 2>&1
done
read fast slow < <(python3 - $o/pinned <<'PY'
import json, glob, sys, re
t = {}
for f in glob.glob(sys.argv[1] + '/stack_cpu*.json'):
    c = int(re.search(r'cpu(\d+)', f).group(1))
    for b in json.load(open(f))['benchmarks']:
        if b.get('aggregate_name') == 'median': t[c] = b['real_time']
print(min(t, key=t.get), max(t, key=t.get))
PY
)
echo "fast=$fast slow=$slow" | tee $o/pinned/cpus.txt; el probe
for c in $fast $slow; do
  timeout 150 taskset -c $c .bundle/bin/bench --backend=cuda --traces=.bundle/traces \
    --benchmark_filter='^(replay/(mutex|lockfree|tls|stream|cudaMallocAsync)/[a-z_0-9]+/real_time|limit/stack/real_time/threads:1)$' \
    --benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$o/pinned/replay_cpu$c.json --benchmark_out_format=json > /dev/null 2> $o/pinned/replay_cpu$c.err
  el replay_cpu$c rc=$?
done
tar czf $OUT/b.tgz -C $OUT b; el done
