#!/usr/bin/env bash
# s34 call B (device), the same bundle as run_a.sh: replay (every trace, the four variants and
# cudaMallocAsync in their own processes, two rounds); then the A/B of this session's change to the
# epochs (the event recorded with no shard lock held) against s33's library (73d21a1, .bundle_s33):
# serve/mixed at 16 and 64 threads for the four variants and serve/small/mutex at 16 threads
# (the one cell under 4x in s33), each bundle in its own fresh processes, alternating, 4 rounds
# (bench/ab_bundles.sh); then issue 14's hot-path check (s30's pair_ab.sh against abb4709).
#   OUT=... bash docs/results/2026-12-06-gpu-s34/run_b.sh   (carry .bundle, .bundle_s33, .bundle_main)
set -u
out=${OUT:-/tmp/s34_b}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.bundle/lib
export REPLAY_ROUNDS=2
budget=${BUDGET:-575}
until=$(( $(date +%s) + budget ))
bash .bundle/gpu-run "$out" $(( budget - 230 )) replay
mkdir -p "$out/serve_ab"
F='^serve/(mutex|lockfree|tls|stream)/mixed/real_time/threads:(16|64)$|^serve/mutex/small/real_time/threads:16$'
ROUNDS=${AB_ROUNDS:-4} REPS=3 MIN_TIME=0.5 TRACES= timeout $(( until - $(date +%s) - 45 )) \
  bash bench/ab_bundles.sh "$out/serve_ab" "$F" .bundle .bundle_s33 > "$out/serve_ab/rounds.txt" 2>&1
echo "serve ab: exit $?" >> "$out/gpu-run.log"
tar -cJf "$out/serve_ab.tar.xz" -C "$out" serve_ab && rm -rf "$out/serve_ab"
mkdir -p "$out/pair_ab"
timeout $(( until - $(date +%s) - 3 )) bash docs/results/2026-12-05-h100-s30/pair_ab.sh "$out/pair_ab" .bundle .bundle_main > "$out/pair_ab/pair_ab.log" 2>&1
echo "pair_ab: exit $?" >> "$out/gpu-run.log"
tar -cJf "$out/pair_ab.tar.xz" -C "$out" pair_ab && rm -rf "$out/pair_ab"
cat "$out/gpu-run.log"
