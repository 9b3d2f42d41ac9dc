#!/usr/bin/env bash
# s23's H200 A/B, prepared on the development machine: the GPU bundle of HEAD (.ci/gpu-bundle: its
# binaries packed into .bundle/bin.tar.xz) plus the bench of BASE_REV (default 71d0ecb, the library
# before s22's epoch_table extraction and heap changes and s23's 64-byte extents), built with the
# same `gpu` preset in a worktree and packed as .bundle/bench_base.xz.
# From the repository root: bash docs/results/2026-12-05-h200-s23/prepare_ab.sh
set -euo pipefail
base_rev=${BASE_REV:-71d0ecb}
bash .ci/gpu-bundle
wt=${BASE_WORKTREE:-/tmp/cudapool-base-$base_rev}
[ -d "$wt" ] || git worktree add "$wt" "$base_rev"
(cd "$wt" && cmake --preset gpu > /dev/null && cmake --build --preset gpu -j "$(nproc)" --target bench)
xz -T0 -c "$wt/build/gpu/bench/bench" > .bundle/bench_base.xz
du -sh .bundle
