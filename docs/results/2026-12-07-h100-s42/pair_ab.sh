#!/usr/bin/env bash
# Issue 14's hot-path target, pinned: pair/tls and pair/stream (4096 B) of this library's bench
# (NEW_BUNDLE, b0) against the pre-heap main's (abb4709; MAIN_BUNDLE, b1), fresh processes
# alternating ROUNDS times (default 6), REPS x MIN_TIME s each (defaults 5 x 0.05):
# bench/ab_bundles.sh, as s30's pair_ab.sh, but the 1-thread benchmarks with every process pinned to
# CPU PIN (default 2), so both bundles run on one core (s40's unpinned 1-thread rounds were bimodal
# for both bundles, 19.5 or 33.6-37.6 ns, by the core a process landed on), and the 16-thread ones
# free, as before. Summaries: s30's pair_ab.py on OUT_DIR/pinned and OUT_DIR/free.
#   bash docs/results/2026-12-07-s42/pair_ab.sh OUT_DIR NEW_BUNDLE MAIN_BUNDLE
set -u
out=${1:?OUT_DIR} new=${2:?NEW_BUNDLE} main=${3:?MAIN_BUNDLE}
here=$(dirname "$0")
ab=$here/../../../bench/ab_bundles.sh
export ROUNDS=${ROUNDS:-6} REPS=${REPS:-5} MIN_TIME=${MIN_TIME:-0.05} TRACES=
PIN=${PIN:-2} bash "$ab" "$out/pinned" '^pair/(tls|stream)/4096/real_time/threads:1$' "$new" "$main"
bash "$ab" "$out/free" '^pair/(tls|stream)/4096/real_time/threads:16$' "$new" "$main"
for d in pinned free; do
  echo "== $d"
  python3 "$here/../2026-12-05-h100-s30/pair_ab.py" "$out/$d"
done
