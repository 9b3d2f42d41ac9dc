#!/usr/bin/env bash
# Planned in s22 for the next session with a GPU; s23 ran it, from the new bundle layout
# (.bundle/bin.tar.xz), as docs/results/2026-12-05-h200-s23/run_ab.sh, which this one calls
# (the gzip version is in git history: 1023a21).
exec bash "$(dirname "$0")/../2026-12-05-h200-s23/run_ab.sh" "$@"
