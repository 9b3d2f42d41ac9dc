#!/usr/bin/env bash
# Builds final/, the input of docs/results.md: s24's final/ (its serve, spread and the s17 parts it
# kept) overlaid with every part this session's calls brought back (c/: torch and replay; b/:
# serve; bench/: pair, prodcons, limit; a/: tests, soak, faults, sanitizer, peers).
#   bash docs/results/2026-12-05-h200-s28/assemble.sh   (from the repository root)
set -euo pipefail
here=docs/results/2026-12-05-h200-s28
rm -rf "$here/final"; mkdir -p "$here/final"
cp docs/results/2026-12-05-h200-s24/final/* "$here/final/"
for part in c b bench a; do
  [ -d "$here/$part" ] || continue
  for f in "$here/$part"/*; do
    case "$(basename "$f")" in *.tar.xz|times.txt|gpu.txt) continue ;; esac
    cp "$f" "$here/final/"
  done
done
chmod u+w "$here/final"/*
ls "$here/final"
