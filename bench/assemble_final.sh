#!/usr/bin/env bash
# Builds a GPU run's final/, the input of docs/make_results.py: unpacks the parts' archives that
# gpu-run wrote (ARCHIVE: <part>.tar.xz) and copies each part's own files (not its subfolders:
# rounds, which stay in the archives) into RUN_DIR/final/, replacing what was there.
#   bash bench/assemble_final.sh RUN_DIR ARCHIVE...   (from the repository root)
set -euo pipefail
here=${1:?usage: assemble_final.sh RUN_DIR ARCHIVE...}
shift
[ $# -gt 0 ] || { echo "assemble_final.sh: name the parts' archives" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rm -rf "$here/final"; mkdir -p "$here/final"
for a in "$@"; do tar -xJf "$a" -C "$tmp"; done
find "$tmp" -mindepth 2 -maxdepth 2 -type f -exec cp {} "$here/final/" \;
chmod u+w "$here/final"/*
ls "$here/final"
