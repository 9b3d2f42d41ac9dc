#!/usr/bin/env bash
# s37 call G (device): does pinning remove lm_infer_varseq's per-process levels? Call F's twelve
# unpinned processes ran the host-bound steps at about 6.3 or 9.6 ms whatever the allocator. Here
# lm_infer_varseq alone (45 steps, 5 warm-up), each process pinned to CPUs 2-3 (taskset; the
# spread part's pinned CPU and its neighbour, neither among the host's slow CPUs), PyTorch's
# allocator and cudapool lockfree alternating, up to three rounds within BUDGET.
#   OUT=... BUDGET=... bash docs/results/2026-12-06-h100-s37/run_g.sh   (carry .bundle, the one of call F)
set -u
out=${OUT:-/tmp/s37_g}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle  # both (s40: a stale local unpack left bin/ out)
deadline=$(( $(date +%s) + ${BUDGET:-150} - 25 ))
{
for r in 1 2 3; do
  for a in torch lockfree; do
    [ "$(date +%s)" -lt "$deadline" ] || break 2
    if [ $a = torch ]; then
      taskset -c 2-3 python3 .bundle/workloads.py --allocator=torch --workloads=lm_infer_varseq --steps=45 --warmup=5 --out="$out/pinned_${a}_r$r.json" > /dev/null
    else
      taskset -c 2-3 python3 .bundle/workloads.py --allocator=cudapool --lib=.bundle/lib/libcudapool_torch.so --variant=$a \
        --workloads=lm_infer_varseq --steps=45 --warmup=5 --out="$out/pinned_${a}_r$r.json" > /dev/null
    fi
    echo "pinned $a round $r exit $?"
  done
done
} > "$out/pinned.log" 2>&1
tar -cJf "$out/pinned.tar.xz" -C "$out" $(cd "$out" && ls pinned_*.json 2>/dev/null) && rm -f "$out"/pinned_*.json
cat "$out/pinned.log"
