#!/usr/bin/env bash
# s37 call F (device): two probes on a bundle built from the tree of aa69693 + 4c7c329 (host_ms; place),
# beside the bundle of calls B-D (691c92d, its bench as .bundle/bench_base.xz).
#  1. lm_infer_varseq alone (65 steps, 5 warm-up), one process per allocator, two rounds
#     alternating: step time and host time per step (host_ms: step() returned, before the
#     synchronize), CUDAPOOL_STATS per cudapool process. Calls B-D's run: in steps of under 300
#     tokens (host-bound) the pools ran 1.07-1.17x PyTorch's allocator, in steps of over 540
#     0.997-1.002x. Is it the host's share?
#  2. replay A/B of segment_heap::place (runs searched only where no free extent fits):
#     mlp_4stream and transformer_lm_train, base (691c92d) and new, two rounds alternating.
#   OUT=... BUDGET=... bash docs/results/2026-12-06-h100-s37/run_f.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s37_f}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
[ -x .bundle/bench_base ] || { xz -dkc .bundle/bench_base.xz > .bundle/bench_base && chmod +x .bundle/bench_base; }
deadline=$(( $(date +%s) + ${BUDGET:-400} - 15 ))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
replay() {  # $1: round
  for b in base new; do
    [ "$(date +%s)" -lt "$deadline" ] || return
    bin=./.bundle/bin/bench; [ $b = base ] && bin=./.bundle/bench_base
    $bin --backend=cuda --traces= --trace=traces/mlp_4stream.csv --trace=.bundle/traces/transformer_lm_train.csv \
      --benchmark_filter='^replay/(lockfree|mutex|tls|stream)/[a-z_0-9]+(/elided)?/real_time' \
      --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true \
      --benchmark_format=json --benchmark_out="$out/replay_${b}_r$1.json" > /dev/null
    echo "replay $b round $1 exit $?"
  done
}
infer() {  # $1: round
  for a in torch torch-expandable lockfree stream mutex tls; do
    [ "$(date +%s)" -lt $(( deadline - 20 )) ] || return
    if [ "${a#torch}" != "$a" ]; then
      python3 .bundle/workloads.py --allocator=$a --workloads=lm_infer_varseq --steps=65 --warmup=5 --out="$out/infer_${a}_r$1.json" > /dev/null
    else
      CUDAPOOL_STATS="$out/stats_${a}_r$1.json" python3 .bundle/workloads.py --allocator=cudapool --lib=.bundle/lib/libcudapool_torch.so \
        --variant=$a --workloads=lm_infer_varseq --steps=65 --warmup=5 --out="$out/infer_${a}_r$1.json" > /dev/null
    fi
    echo "infer $a round $1 exit $?"
  done
}
{
infer 1; replay 1; infer 2; replay 2
} >> "$out/probe.log" 2>&1
rm -rf .bundle/bench_base
tar -cJf "$out/probe.tar.xz" -C "$out" $(cd "$out" && ls replay_*.json infer_*.json stats_*.json 2>/dev/null) && rm -f "$out"/replay_*.json "$out"/infer_*.json "$out"/stats_*.json
cat "$out/probe.log" | grep -v "^\s*$" | tail -40
