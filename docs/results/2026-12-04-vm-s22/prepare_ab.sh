#!/usr/bin/env bash
# Before the H200 A/B of run_ab.sh: builds the GPU bundle of HEAD (.ci/gpu-bundle) and adds the bench
# of this session's start, 71d0ecb (the library before the epoch_table extraction and f2edade), as
# .bundle/bin/bench_base, built with the same `gpu` preset in a worktree. Gzips the two benches so
# that the bundle stays within the device tool's carry limit (run_ab.sh unpacks them).
# From the repository root: bash docs/results/2026-12-04-vm-s22/prepare_ab.sh
set -euo pipefail
base_rev=${BASE_REV:-71d0ecb}
bash .ci/gpu-bundle
wt=${BASE_WORKTREE:-/tmp/cudapool-base-$base_rev}
[ -d "$wt" ] || git worktree add "$wt" "$base_rev"
(cd "$wt" && cmake --preset gpu > /dev/null && cmake --build --preset gpu -j "$(nproc)" --target bench)
cp "$wt/build/gpu/bench/bench" .bundle/bin/bench_base
gzip -f .bundle/bin/bench .bundle/bin/bench_base
du -sh .bundle
