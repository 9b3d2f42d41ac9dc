#!/usr/bin/env bash
# s20, on the development VM (2 vCPUs, AMD EPYC, no GPU; after CI had finished): the tls pool's
# single-thread speed per pool instance against the placement of its hot data. Build bench with
# diag_tls_instances.patch applied (not kept), then from the repository root:
set -u
for i in $(seq 1 12); do
  CUDAPOOL_DIAG=1 taskset -c 1 build/default/bench/bench --backend=sim --traces= \
    --benchmark_filter='^pair/tls/4096/real_time/threads:1$' --benchmark_min_time=0.05 --benchmark_repetitions=10 \
    2>&1 >/dev/null | grep ^DIAG
done > docs/results/2026-12-04-h200-s20/local_diag/diag.txt
python3 docs/results/2026-12-04-h200-s20/local_diag/analyze.py docs/results/2026-12-04-h200-s20/local_diag/diag.txt
