#!/usr/bin/env bash
# Builds final/, the input of docs/results.md: s30's run on the H100 (the device tool gave an H100
# though the calls named nvidia-h200) of library e4d5eda's pools (the bundle at ed74a84: the
# plug-in's CUDAPOOL_EPOCH_BATCH and the trace's thread column are all that changed): a/ torch and
# serve, b/ replay and spread, c/ pagebench, d/ peers and sanitizer; and, for the soak with the GPU
# tests and faults, which this session's device time did not cover, s29's H100 run of the same
# pools (docs/results/2026-12-05-h100-s29, c/soak_tests.tar.xz). The parts' own subfolders
# (rounds) stay in their archives.
#   bash docs/results/2026-12-05-h100-s30/assemble.sh   (from the repository root)
set -euo pipefail
here=docs/results/2026-12-05-h100-s30
s29=docs/results/2026-12-05-h100-s29
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rm -rf "$here/final"; mkdir -p "$here/final" "$tmp/s29" "$tmp/s30"
tar -xJf "$s29/c/soak_tests.tar.xz" -C "$tmp/s29"
for a in "$here"/a/torch.tar.xz "$here"/a/serve.tar.xz "$here"/b/replay.tar.xz "$here"/b/spread.tar.xz \
         "$here"/c/pagebench.tar.xz "$here"/d/peers.tar.xz "$here"/d/sanitizer.tar.xz; do
  tar -xJf "$a" -C "$tmp/s30"
done
find "$tmp/s29" -mindepth 2 -maxdepth 2 -type f -exec cp {} "$here/final/" \;
find "$tmp/s30" -mindepth 2 -maxdepth 2 -type f -exec cp {} "$here/final/" \;
chmod u+w "$here/final"/*
ls "$here/final"
