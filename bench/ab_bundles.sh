#!/usr/bin/env bash
# An A/B (or A/B/C...) of the bench of several bundles: each bundle's bench in its own fresh process,
# the bundles alternating, ROUNDS rounds (default 3); each process runs the benchmarks FILTER selects,
# REPS repetitions x MIN_TIME s (defaults 3 x 0.3) in random order, medians kept. Each ratio is then
# taken between processes of one round (the host drifts between rounds; s26).
#   bash bench/ab_bundles.sh OUT_DIR FILTER BUNDLE0 BUNDLE1 [BUNDLE2 ...]
# Writes OUT_DIR/b<i>_<round>.json (Google Benchmark's JSON) and .err, and one line per process.
# A bundle is what .ci/gpu-bundle makes (bin.tar.xz or bin/, lib/, traces/); a bundle of only
# bin/bench (an older commit's bench) runs with BUNDLE0's lib/. TRACES: the traces directory passed
# to every process (default each bundle's traces/; empty: none). BACKEND=sim runs it without a GPU.
# PIN=CPU: every process pinned to that CPU (taskset -c): single-thread figures then compare the
# bundles on one core, not on whichever core the OS picked for each process (s30 on the H100: five
# fresh processes within 1.01-1.04x pinned, 1.02-1.24x free; s40's unpinned single-thread A/B rounds
# were bimodal for both bundles).
set -u
pin=()
if [ -n "${PIN:-}" ]; then
  command -v taskset > /dev/null || { echo "ab_bundles.sh: PIN needs taskset" >&2; exit 2; }
  pin=(taskset -c "$PIN")
fi
out=${1:?usage: ab_bundles.sh OUT_DIR FILTER BUNDLE0 BUNDLE1 [...]}
filter=${2:?usage: ab_bundles.sh OUT_DIR FILTER BUNDLE0 BUNDLE1 [...]}
shift 2
[ $# -ge 2 ] || { echo "ab_bundles.sh: name at least two bundles" >&2; exit 2; }
mkdir -p "$out"
for b in "$@"; do
  if [ -f "$b/bin.tar.xz" ] && [ ! -d "$b/bin" ]; then tar -xJf "$b/bin.tar.xz" -C "$b" || exit 2; fi
  [ -x "$b/bin/bench" ] || { echo "ab_bundles.sh: $b/bin/bench is missing" >&2; exit 2; }
done
status=0
for r in $(seq 1 "${ROUNDS:-3}"); do
  i=0
  for b in "$@"; do
    lib=$b/lib; [ -d "$lib" ] || lib=$1/lib
    traces=${TRACES-$b/traces}
    LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "${pin[@]}" "$b/bin/bench" --backend="${BACKEND:-cuda}" \
      --traces="$traces" --benchmark_filter="$filter" --benchmark_min_time="${MIN_TIME:-0.3}" \
      --benchmark_repetitions="${REPS:-3}" --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_format=json > "$out/b${i}_$r.json" 2> "$out/b${i}_$r.err"
    rc=$?
    echo "round $r bundle $i ($b): exit $rc"
    (( rc == 0 )) || status=1
    i=$((i + 1))
  done
done
exit $status
