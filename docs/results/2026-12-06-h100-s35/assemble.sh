#!/usr/bin/env bash
# Builds final/, the input of docs/results.md: s35's calls (an H100; every call named nvidia-h200)
# on one bundle built at c9dc6c3, the final library (73d21a1's allocation paths): b/ soak with the
# GPU tests and faults, torch, sanitizer; c/ serve and replay; d/ pagebench, peers, spread.
#   bash docs/results/2026-12-06-h100-s35/assemble.sh   (from the repository root)
set -euo pipefail
here=docs/results/2026-12-06-h100-s35
exec bash bench/assemble_final.sh "$here" "$here"/b/soak_tests.tar.xz "$here"/b/torch.tar.xz "$here"/c/serve.tar.xz \
  "$here"/c/replay.tar.xz "$here"/d/spread.tar.xz "$here"/d/pagebench.tar.xz "$here"/d/peers.tar.xz "$here"/b/sanitizer.tar.xz
