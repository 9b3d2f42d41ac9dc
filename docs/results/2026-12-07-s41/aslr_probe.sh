#!/usr/bin/env bash
# s41: does a process's single-thread level follow its address layout? Fresh processes of one
# bench, pinned to one CPU, alternating between the default (ASLR: each process its own layout)
# and `setarch -R` (no randomisation: every process the same layout). If the levels that pair's
# figures fall into (issue 15's spread) vanish without ASLR, the layout sets them; if they stay,
# it does not. The sim backend: pair never touches block memory, and no CUDA context is made.
#   bash aslr_probe.sh OUT [PROCESSES] [BENCH]   (repository root; CPU=2 by default)
set -u
out=${1:?usage: aslr_probe.sh OUT [PROCESSES] [BENCH]}
n=${2:-8}
bench=${3:-.bundle/bin/bench}
cpu=${CPU:-2}
mkdir -p "$out"
# The bundle's bench needs the bundle's shared libraries (gpu-suite sets this for its parts; s43's
# first run of this probe, without it, failed every process).
export LD_LIBRARY_PATH="$(cd "$(dirname "$bench")/.." && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for v in tls mutex; do
  for i in $(seq 1 "$n"); do
    for mode in aslr fixed; do
      pre=()
      [ "$mode" = fixed ] && pre=(setarch "$(uname -m)" -R)
      t=$("${pre[@]}" taskset -c "$cpu" "$bench" --backend=sim --traces= \
            --benchmark_filter="^pair/$v/4096/real_time/threads:1\$" --benchmark_min_time=0.2 \
            --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>/dev/null |
          awk '/_median/ {print $2}')
      echo "$v $mode $i ${t:-failed}" | tee -a "$out/aslr.txt"
    done
  done
done
