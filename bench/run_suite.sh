#!/usr/bin/env bash
# Runs the whole bench suite and writes its JSON, console output, plots and summary into OUT_DIR.
#
#   bench/run_suite.sh BENCH_BINARY OUT_DIR [--backend=cuda] [more bench / Google Benchmark flags]
#
# Run from the repository root (the traces are found at ../shared/traces, relative to the current
# directory; pass --traces=DIR otherwise). On the H200 host:
#   bench/run_suite.sh build/bench/bench docs/results/$(date +%F) --backend=cuda
# OUT_DIR/command.txt records the exact command, the date, the commit and the GPU.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,10p' "$0"
  exit 2
fi
bench=$1
out=$2
shift 2
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)

cmd=("$bench" --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
     --benchmark_out="$out/bench.json" --benchmark_out_format=json "$@")
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$here/.." rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$here/.." diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "host: $(uname -n), $(nproc) CPUs"
  echo "gpu: $(nvidia-smi -L 2>/dev/null | head -1 || echo none)"
  echo "command: ${cmd[*]}"
  echo "plots: /usr/bin/python3 bench/plot.py $out/bench.json $out"
} > "$out/command.txt"
cat "$out/command.txt"

start=$(date +%s)
# bench exits 1 when a benchmark of the library's ended in an error (a cudapool variant's wrong
# results in serve among them), 3 when only peers' did: the run is still plotted (every other
# figure holds), and the suite exits with bench's status.
status=0
"${cmd[@]}" 2>&1 | tee "$out/bench.txt" || status=$?
echo "bench wall time: $(( $(date +%s) - start )) s" | tee -a "$out/command.txt"
if [[ $status -ne 0 ]]; then
  echo "bench exit status: $status (see bench.txt)" | tee -a "$out/command.txt"
fi
/usr/bin/python3 "$here/plot.py" "$out/bench.json" "$out"
exit "$status"
