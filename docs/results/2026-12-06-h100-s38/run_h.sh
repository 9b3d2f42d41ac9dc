#!/usr/bin/env bash
# Planned by s37, run by s38 as call a (README.md: the replay maps 1,086, so the device's lag was the
# cause; s39's plan runs it again to measure the fix). Why lm_infer_varseq alone makes the pools map 1,312 MiB on the GPU
# (1.136x expandable segments' process) where the sim's replays of the same 65 steps map 1,072-1,086
# (docs/results/2026-12-06-h100-s37/README.md, "Open"). On one bundle built at the commit to
# measure (`bash .ci/gpu-bundle`), carried as .bundle:
#  1. lm_infer_varseq alone, 65 steps (the lengths of call F), `lockfree` with its allocation trace
#     (CUDAPOOL_TRACE through --trace-dir) and CUDAPOOL_STATS, and `stream` and torch-expandable
#     beside it;
#  2. that trace replayed by bench on the GPU (stream-ordered, elided, immediate) and on the sim,
#     `lockfree` and `stream`, and `-tight` (64 KiB classes): does the GPU's replay map 1,312?
#   OUT=... BUDGET=... bash docs/results/<this directory>/run_h.sh
set -u
out=${OUT:-/tmp/s38_h}
mkdir -p "$out/traces"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle  # both (s40: a stale local unpack left bin/ out)
deadline=$(( $(date +%s) + ${BUDGET:-300} - 20 ))
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CUDAPOOL_STATS="$out/stats_lockfree.json" python3 .bundle/workloads.py --allocator=cudapool --lib=.bundle/lib/libcudapool_torch.so \
  --variant=lockfree --only-workload=lm_infer_varseq --steps=65 --trace-dir="$out/traces" --out="$out/infer_lockfree.json" > /dev/null
echo "traced lockfree exit $?"
CUDAPOOL_STATS="$out/stats_stream.json" python3 .bundle/workloads.py --allocator=cudapool --lib=.bundle/lib/libcudapool_torch.so \
  --variant=stream --workloads=lm_infer_varseq --steps=65 --out="$out/infer_stream.json" > /dev/null
echo "stream exit $?"
python3 .bundle/workloads.py --allocator=torch-expandable --workloads=lm_infer_varseq --steps=65 --out="$out/infer_torch-expandable.json" > /dev/null
echo "torch-expandable exit $?"
for backend in cuda sim; do
  [ "$(date +%s)" -lt "$deadline" ] || break
  ./.bundle/bin/bench --backend=$backend --traces= --trace="$out/traces/lm_infer_varseq.csv" \
    --benchmark_filter='^replay/(lockfree|stream)(-tight)?/lm_infer_varseq(/elided|/immediate)?/real_time' \
    --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true \
    --benchmark_format=json --benchmark_out="$out/replay_$backend.json" > /dev/null
  echo "replay $backend exit $?"
done
} > "$out/probe.log" 2>&1
tar -cJf "$out/probe.tar.xz" -C "$out" $(cd "$out" && ls *.json traces/* 2>/dev/null) && rm -rf "$out"/*.json "$out/traces"
cat "$out/probe.log"
