#!/usr/bin/env bash
# Builds final/, the input of docs/results.md: s34's calls (an H100; the calls named nvidia-h200) on
# one bundle built at 95f302b (the library with the epochs' record outside the shard lock, reverted
# after this run, and serve's close counters): a/ soak with the GPU tests and faults, and torch;
# b/ replay (and the serve A/B, pair_ab); c/ pagebench, peers, sanitizer, spread and serve.
#   bash docs/results/2026-12-06-h100-s34/assemble.sh   (from the repository root)
set -euo pipefail
here=docs/results/2026-12-06-h100-s34
exec bash bench/assemble_final.sh "$here" "$here"/a/soak_tests.tar.xz "$here"/a/torch.tar.xz "$here"/c/serve.tar.xz \
  "$here"/b/replay.tar.xz "$here"/c/spread.tar.xz "$here"/c/pagebench.tar.xz "$here"/c/peers.tar.xz "$here"/c/sanitizer.tar.xz
