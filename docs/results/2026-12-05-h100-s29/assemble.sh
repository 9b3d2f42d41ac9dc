#!/usr/bin/env bash
# Builds final/, the input of docs/results.md: every part that s29's calls 2 and 3 brought back (b/:
# torch, serve, replay, pagebench, sanitizer; c/: soak_tests, peers, spread), one run of one library
# on one host. The parts' own subfolders (rounds) stay in their archives.
#   bash docs/results/2026-12-05-h100-s29/assemble.sh   (from the repository root)
set -euo pipefail
here=docs/results/2026-12-05-h100-s29
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rm -rf "$here/final"; mkdir -p "$here/final"
for a in "$here"/b/*.tar.xz "$here"/c/*.tar.xz; do tar -xJf "$a" -C "$tmp"; done
find "$tmp" -mindepth 2 -maxdepth 2 -type f -exec cp {} "$here/final/" \;
chmod u+w "$here/final"/*
ls "$here/final"
