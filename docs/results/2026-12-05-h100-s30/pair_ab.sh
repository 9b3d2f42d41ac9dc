#!/usr/bin/env bash
# Issue 14's hot-path target: pair/tls and pair/stream (4096 B) at 1 and 16 threads, this library's
# bench (NEW_BUNDLE, b0) against the pre-heap main's (abb4709; MAIN_BUNDLE, b1) in fresh processes
# alternating ROUNDS times (default 4), REPS x MIN_TIME s each (defaults 5 x 0.05): bench/ab_bundles.sh.
#   bash docs/results/2026-12-05-h100-s30/pair_ab.sh OUT_DIR NEW_BUNDLE MAIN_BUNDLE
# MAIN_BUNDLE holds abb4709's bench (`cmake --preset gpu`, `--target bench` in a worktree) as
# bin/bench (or bin.tar.xz), and runs with NEW_BUNDLE's lib/. Summary: pair_ab.py OUT_DIR.
# BACKEND=sim runs it without a GPU.
ROUNDS=${ROUNDS:-4} REPS=${REPS:-5} MIN_TIME=${MIN_TIME:-0.05} TRACES= \
  exec bash "$(dirname "$0")/../../../bench/ab_bundles.sh" "${1:?OUT_DIR}" '^pair/(tls|stream)/4096/real_time/threads:(1|16)$' \
  "${2:?NEW_BUNDLE}" "${3:?MAIN_BUNDLE}"
