#!/bin/bash
# The H200 A/B that s25 and s26 could not run (no GPU lent): the replay part's pools (stream-ordered
# and /elided) and cudaMallocAsync from N bundles in alternating fresh processes, ROUNDS rounds
# (default 2), each process REPS repetitions x MIN_TIME s in random order (defaults 3 x 0.3 s:
# about 50 s a process, 5 minutes for three bundles).
#   bash docs/results/2026-12-05-vm-s26/run_ab_gpu.sh OUT_DIR BUNDLE0 BUNDLE1 [BUNDLE2 ...]
#   python3 docs/results/2026-12-05-vm-s26/ab_n.py OUT_DIR
# The plan: BUNDLE0 s24's library (36b6a7f, the results page's), BUNDLE1 s25's marks rule
# (7c0a6f9), BUNDLE2 this session's (word_lock and the trimmed large path). A bundle is what
# .ci/gpu-bundle makes (.bundle: bin.tar.xz, lib/, traces/); make the older ones in worktrees and
# move their .bundle beside this one under ignored names (.bundle_s24, .bundle_s25), and carry them
# all (6.5 MB each; the tree is 31 MB of the 64 MiB carry). BACKEND=sim runs it without a GPU.
set -eu
out=$1
shift
mkdir -p "$out"
for b in "$@"; do
  if [ -f "$b/bin.tar.xz" ] && [ ! -d "$b/bin" ]; then tar -xJf "$b/bin.tar.xz" -C "$b"; fi
done
F='^replay/(mutex|lockfree|tls|stream|cudaMallocAsync)/[^/]+(/elided)?/real_time$'
for r in $(seq 1 "${ROUNDS:-2}"); do
  i=0
  for b in "$@"; do
    LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$b/bin/bench" --backend="${BACKEND:-cuda}" \
      --traces="$b/traces" --benchmark_filter="$F" --benchmark_min_time="${MIN_TIME:-0.3}" \
      --benchmark_repetitions="${REPS:-3}" --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_format=json 2> "$out/ab_b${i}_$r.err" > "$out/ab_b${i}_$r.json"
    echo "round $r bundle $i ($b): exit $?"
    i=$((i + 1))
  done
done
