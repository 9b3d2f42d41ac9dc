#!/usr/bin/env bash
# s48, call b, on the machine call a left warm: serve (small and mixed at 1, 16 and 64 threads;
# every variant as it is and with 16 stream arenas, tls-mr, cudaMallocAsync, cub and none, each in
# its own processes, SERVE_ROUNDS rounds (2), 3 x SERVE_MIN_TIME (0.3) s a point), then the peers
# through stress (`stress --allocator=cudaMallocAsync|cub --threads=16 --streams=16`, PEER_SECONDS
# (20) each) and the sanitizer part; then pair_front.sh (the arenas' front on the small-class hot
# path: pair/tls and pair/stream against their -arenas, 1 and 16 threads, 4 rounds).
#   OUT=$OUT bash docs/results/2026-12-07-s48/run_b.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
source "$(dirname "$0")/allocators.sh"
SERVE_ROUNDS=${SERVE_ROUNDS:-2} SERVE_MIN_TIME=${SERVE_MIN_TIME:-0.3} \
SERVE_ALLOCATORS="$(variants '') $(variants -arenas) tls-mr cudaMallocAsync cub none" \
PEER_SECONDS=${PEER_SECONDS:-20} \
  bash .bundle/gpu-run "$out" "${BUDGET:-420}" serve:220 peers:45 sanitizer:12
cat "$out/gpu-run.log"
t0=$(date +%s)
bash "$(dirname "$0")/pair_front.sh" "$out/pair_front"
echo "pair_front: exit $? in $(( $(date +%s) - t0 )) s"
tar -cJf "$out/pair_front.tar.xz" -C "$out" pair_front && rm -rf "$out/pair_front"
