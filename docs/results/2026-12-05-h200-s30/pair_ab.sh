#!/usr/bin/env bash
# Issue 14's hot-path target: pair/tls and pair/stream (4096 B) at 1 and 16 threads, this library's
# bench against the pre-heap main's (abb4709), each in fresh processes alternating ROUNDS times
# (default 4), REPS repetitions x MIN_TIME s (defaults 5 x 0.05), medians kept.
#   bash pair_ab.sh OUT_DIR NEW_BUNDLE MAIN_BUNDLE
# A bundle is what .ci/gpu-bundle makes (bin.tar.xz, lib/). MAIN_BUNDLE holds abb4709's bench
# (built with `cmake --preset gpu` in a worktree, `--target bench`) as bin/bench and the same lib/.
# Summary: python3 pair_ab.py OUT_DIR. BACKEND=sim runs it without a GPU.
set -u
out=$1; new=$2; old=$3
mkdir -p "$out"
for b in "$new" "$old"; do
  if [ -f "$b/bin.tar.xz" ] && [ ! -d "$b/bin" ]; then tar -xJf "$b/bin.tar.xz" -C "$b"; fi
done
F='^pair/(tls|stream)/4096/real_time/threads:(1|16)$'
for r in $(seq 1 "${ROUNDS:-4}"); do
  for side in new old; do
    b=$new; [ $side = old ] && b=$old
    LD_LIBRARY_PATH="$new/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$b/bin/bench" --backend="${BACKEND:-cuda}" \
      --traces= --benchmark_filter="$F" --benchmark_min_time="${MIN_TIME:-0.05}" \
      --benchmark_repetitions="${REPS:-5}" --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_format=json > "$out/${side}_$r.json" 2> "$out/${side}_$r.err"
    echo "round $r $side ($b): exit $?"
  done
done
