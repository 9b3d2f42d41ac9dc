#!/usr/bin/env bash
# Builds final/, the input of docs/results.md: s36's calls on one bundle built at 691c92d (the
# allocation paths of s35's run; bench's, stress's and the plug-in's input checks since): b/ soak with the GPU tests and faults, torch, sanitizer;
# c/ replay, serve, peers; d/ spread, pagebench.
#   bash docs/results/<this directory>/assemble.sh   (from the repository root)
set -euo pipefail
here=$(dirname "$0")
exec bash bench/assemble_final.sh "$here" "$here"/b/soak_tests.tar.xz "$here"/b/torch.tar.xz "$here"/c/serve.tar.xz \
  "$here"/c/replay.tar.xz "$here"/d/spread.tar.xz "$here"/d/pagebench.tar.xz "$here"/c/peers.tar.xz "$here"/b/sanitizer.tar.xz
