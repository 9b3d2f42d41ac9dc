#!/usr/bin/env bash
# Builds final/, the input of docs/results.md, for library e4d5eda (the final code; 4d22d41 changed
# no library file): this session's H200 parts (a/: torch, serve; b/: replay, pagebench, spread) and,
# for the parts this session's device time did not cover, s29's H100 run of the same library
# (soak and GPU tests, faults, peers, sanitizer: docs/results/2026-12-05-h100-s29). A part of s30
# replaces s29's. The parts' own subfolders (rounds) stay in their archives.
#   bash docs/results/2026-12-05-h200-s30/assemble.sh   (from the repository root)
set -euo pipefail
here=docs/results/2026-12-05-h200-s30
s29=docs/results/2026-12-05-h100-s29
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rm -rf "$here/final"; mkdir -p "$here/final" "$tmp/s29" "$tmp/s30"
for a in "$s29"/c/soak_tests.tar.xz "$s29"/c/peers.tar.xz "$s29"/b/sanitizer.tar.xz; do tar -xJf "$a" -C "$tmp/s29"; done
for a in "$here"/a/*.tar.xz "$here"/b/*.tar.xz; do
  [ "$(basename "$a")" = pair_ab.tar.xz ] || tar -xJf "$a" -C "$tmp/s30"
done
find "$tmp/s29" -mindepth 2 -maxdepth 2 -type f -exec cp {} "$here/final/" \;
find "$tmp/s30" -mindepth 2 -maxdepth 2 -type f -exec cp {} "$here/final/" \;
chmod u+w "$here/final"/*
ls "$here/final"
