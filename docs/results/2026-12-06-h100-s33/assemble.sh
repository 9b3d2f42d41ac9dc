#!/usr/bin/env bash
# Builds final/, the input of docs/results.md: s33's three calls (an H100; the calls named
# nvidia-h200) on one bundle built at fa24dc7 (the library as s32 left it): a/ soak with the GPU tests
# and faults, torch and serve; b/ replay, pair_ab and spread; c/ pagebench, peers and sanitizer. The
# parts' own subfolders (rounds) stay in their archives.
#   bash docs/results/2026-12-06-h100-s33/assemble.sh   (from the repository root)
set -euo pipefail
here=docs/results/2026-12-06-h100-s33
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rm -rf "$here/final"; mkdir -p "$here/final"
for a in "$here"/a/soak_tests.tar.xz "$here"/a/torch.tar.xz "$here"/a/serve.tar.xz "$here"/b/replay.tar.xz \
         "$here"/b/spread.tar.xz "$here"/c/pagebench.tar.xz "$here"/c/peers.tar.xz "$here"/c/sanitizer.tar.xz; do
  tar -xJf "$a" -C "$tmp"
done
find "$tmp" -mindepth 2 -maxdepth 2 -type f -exec cp {} "$here/final/" \;
chmod u+w "$here/final"/*
ls "$here/final"
