#!/usr/bin/env bash
# s35 call A (device): two probes before the suite run of the final code.
# 1. tls's two memory levels in PyTorch (docs/pytorch.md: 2,834 or 2,948-2,964 MiB over the
#    baseline after lm_train, the thread caches'): lm_train alone, one process each, ROUNDS rounds
#    alternating: tls with CUDAPOOL_TLS_CACHE_BYTES = each of BUDGETS ("default" = the plug-in's
#    own), lockfree and PyTorch with expandable segments beside them; every process's printed line
#    and its CUDAPOOL_STATS file are kept.
# 2. mutex's single-thread pair against where the main thread's stack starts (setarch -R, s33's
#    stack_offset.sh), pinned to CPU 2, where s34's five pinned processes spanned 1.22x.
#   OUT=... bash docs/results/2026-12-06-h100-s35/run_a.sh   (carry .bundle)
set -u
out=${OUT:-/tmp/s35_a}
mkdir -p "$out/tls"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -d .bundle/bin ] || tar -xJf .bundle/bin.tar.xz -C .bundle
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
py=python3
steps=${STEPS:-40}
t0=$(date +%s)
for r in $(seq 1 "${ROUNDS:-5}"); do
  for a in ${BUDGETS:-default 16m 0} lockfree expandable; do
    case $a in
    expandable) $py .bundle/workloads.py --allocator=torch-expandable --workloads=lm_train --steps="$steps" \
        --out="$out/tls/expandable_r$r.json" 2>&1 | grep -E 'lm_train|Error|error' | sed "s/^/r$r $a: /" ;;
    lockfree) CUDAPOOL_STATS="$out/tls/stats_lockfree_r$r.json" $py .bundle/workloads.py --allocator=cudapool \
        --lib=.bundle/lib/libcudapool_torch.so --variant=lockfree --workloads=lm_train --steps="$steps" \
        --out="$out/tls/lockfree_r$r.json" 2>&1 | grep -E 'lm_train|Error|error' | sed "s/^/r$r $a: /" ;;
    *) if [ "$a" = default ]; then unset CUDAPOOL_TLS_CACHE_BYTES; else export CUDAPOOL_TLS_CACHE_BYTES=$a; fi
       CUDAPOOL_STATS="$out/tls/stats_tls_${a}_r$r.json" $py .bundle/workloads.py --allocator=cudapool \
        --lib=.bundle/lib/libcudapool_torch.so --variant=tls --workloads=lm_train --steps="$steps" \
        --out="$out/tls/tls_${a}_r$r.json" 2>&1 | grep -E 'lm_train|Error|error' | sed "s/^/r$r tls $a: /"
       unset CUDAPOOL_TLS_CACHE_BYTES ;;
    esac
  done
  echo "round $r done at $(( $(date +%s) - t0 )) s"
done 2>&1 | tee "$out/tls.log"
if command -v taskset > /dev/null; then
  BENCH_FILTER='^pair/mutex/4096/real_time/threads:1$' ROUNDS=${SWEEP_ROUNDS:-2} RANDOM_RUNS=16 \
    taskset -c "${SPREAD_CPU:-2}" bash docs/results/2026-12-06-vm-s33/stack_offset.sh .bundle/bin/bench "${STEPS_PAD:-32}" 128 \
    > "$out/stack_offset_mutex.txt" 2>&1
  tail -100 "$out/stack_offset_mutex.txt" | tr '\n' ';'
fi
cd "$out" && tar -cJf tls.tar.xz tls && rm -rf tls
echo "call A: $(( $(date +%s) - t0 )) s"
