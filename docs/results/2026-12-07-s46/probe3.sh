#!/usr/bin/env bash
# s46's third GPU call: is mutex with 16 stream arenas slower on PyTorch's mlp_4stream (probe.sh's
# one round: 6.60 ms a step against 5.83 for PyTorch's allocator), or was that one process's host?
# ROUNDS rounds (3) of torch, mutex, mutex-arenas and lockfree-arenas, mlp_4stream alone, the order
# rotating by round, each process with its CUDAPOOL_STATS file; the summary as gpu-suite makes it.
#   OUT=$OUT bash docs/results/2026-12-07-s46/probe3.sh       (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # the plug-in's libtbb
w=$out/mlp; mkdir -p "$w"
lib=$PWD/.bundle/lib/libcudapool_torch.so
allocs=(torch mutex mutex-arenas lockfree-arenas)
runs=()
for ((r = 1; r <= ${ROUNDS:-3}; r++)); do
  for ((i = 0; i < ${#allocs[@]}; i++)); do
    a=${allocs[(i + r - 1) % ${#allocs[@]}]}
    case $a in
    torch) args=(--allocator=torch) ;;
    *-arenas) args=(--allocator=cudapool --lib="$lib" --variant="${a%-arenas}" --stream-arenas=16) ;;
    *) args=(--allocator=cudapool --lib="$lib" --variant="$a") ;;
    esac
    CUDAPOOL_STATS="$w/stats_${a}_r$r.json" timeout 120 python3 .bundle/workloads.py "${args[@]}" \
      --workloads=mlp_4stream --steps=50 --out="$w/${a}_r$r.json" > "$w/${a}_r$r.log" 2>&1 || echo "$a round $r: exit $?"
    [ -f "$w/${a}_r$r.json" ] && runs+=("$w/${a}_r$r.json")
    tail -1 "$w/${a}_r$r.log"
  done
done
python3 .bundle/workloads.py --summary "${runs[@]}" --out="$w/workloads.json" | head -12
tar -cJf "$out/mlp.tar.xz" -C "$out" mlp && rm -rf "$w"
