#!/bin/bash
# The H200 A/B this session could not run: the replay part's pools (stream-ordered and /elided) and
# cudaMallocAsync from two bundles in alternating fresh processes, ROUNDS rounds (default 3), each
# process REPS repetitions x MIN_TIME s in random order. Base: s24's library (36b6a7f); new: s25's
# marks rule (epoch_table::full).
#   bash docs/results/2026-12-05-vm-s25/run_ab_gpu.sh BASE_BUNDLE NEW_BUNDLE OUT_DIR
# A bundle is what .ci/gpu-bundle makes (.bundle: bin.tar.xz, lib/, traces/); make the base one in
# a worktree of 36b6a7f and move its .bundle beside this one (both travel: carry both). Then
#   python3 docs/results/2026-12-05-vm-s25/ab.py OUT_DIR
# BACKEND=sim runs it without a GPU (bundles of build/default's bench: bin/bench, traces/).
set -eu
base=$1 new=$2 out=$3
mkdir -p "$out"
for b in "$base" "$new"; do
  if [ -f "$b/bin.tar.xz" ] && [ ! -d "$b/bin" ]; then tar -xJf "$b/bin.tar.xz" -C "$b"; fi
done
F='^replay/(mutex|lockfree|tls|stream|cudaMallocAsync)/[^/]+(/elided)?/real_time$'
for r in $(seq 1 "${ROUNDS:-3}"); do
  for side in base new; do
    b=$base; [ $side = new ] && b=$new
    LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$b/bin/bench" --backend="${BACKEND:-cuda}" \
      --traces="$b/traces" --benchmark_filter="$F" --benchmark_min_time="${MIN_TIME:-0.5}" \
      --benchmark_repetitions="${REPS:-3}" --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_format=json 2> "$out/ab_${side}_$r.err" > "$out/ab_${side}_$r.json"
    echo "round $r $side: exit $?"
  done
done
