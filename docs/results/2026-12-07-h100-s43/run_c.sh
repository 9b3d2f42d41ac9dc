#!/usr/bin/env bash
# s43, call c: s41's ASLR probe (its first run, in call a, failed every process: the bundle's
# libraries were not on the loader's path), then replay (every trace, 2 rounds) and pagebench on
# this call's host, so that the replay figures and the hot-path ones come from one host.
#   OUT=$OUT bash docs/results/2026-12-07-s43/run_c.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
[ -x .bundle/bin/bench ] || tar -xJf .bundle/bin.tar.xz -C .bundle
mkdir -p "$out/aslr"
timeout "${ASLR_SECONDS:-60}" bash docs/results/2026-12-07-s41/aslr_probe.sh "$out/aslr" "${ASLR_PROCESSES:-6}"
tar -cJf "$out/aslr.tar.xz" -C "$out" aslr && rm -rf "$out/aslr"
REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} bash .bundle/gpu-run "$out" "${BUDGET:-450}" replay:340 pagebench:60
