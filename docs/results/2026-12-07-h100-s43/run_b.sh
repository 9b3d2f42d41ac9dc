#!/usr/bin/env bash
# s43, call b: issue 15's serve/mixed with more rounds than s42's two (whose round spread, cv 3.8-4.7%,
# could not resolve the 0.98 target), then issue 14's hot-path A/B against main's (abb4709) pinned,
# with more rounds than s42's six.
#   OUT=$OUT bash docs/results/2026-12-07-s43/run_b.sh     (repository root; .bundle and .bundle_main carried)
set -u
out=${OUT:?OUT}
SERVE_KINDS=mixed SERVE_ROUNDS=${SERVE_ROUNDS:-4} bash .bundle/gpu-run "$out" "${BUDGET:-330}" serve:200
mkdir -p "$out/pair_ab"
ROUNDS=${AB_ROUNDS:-8} timeout "${AB_SECONDS:-200}" bash docs/results/2026-12-07-h100-s42/pair_ab.sh "$out/pair_ab" .bundle .bundle_main > "$out/pair_ab/summary.txt" 2>&1
tar -cJf "$out/pair_ab.tar.xz" -C "$out" pair_ab && rm -rf "$out/pair_ab"
