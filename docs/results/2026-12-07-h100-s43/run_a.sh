#!/usr/bin/env bash
# s43, call a: what s42's run owed (docs/results/2026-12-07-h100-s42/README.md): issue 14's
# 5-minute GPU soak per variant with 1-64 MiB requests (the four variants side by side, gpu-suite's
# soak part), the spread part whole (issue 15: instances' fresh processes, bench's fresh processes
# free, one per CPU and pinned, the instances of one process), then s41's ASLR probe.
#   OUT=$OUT bash docs/results/2026-12-07-s43/run_a.sh     (repository root; .bundle carried)
set -u
out=${OUT:?OUT}
SOAK_SECONDS=300 SOAK_SIZES=mixed bash .bundle/gpu-run "$out" "${BUDGET:-525}" soak:310 spread:160
mkdir -p "$out/aslr"
timeout "${ASLR_SECONDS:-55}" bash docs/results/2026-12-07-s41/aslr_probe.sh "$out/aslr" "${ASLR_PROCESSES:-6}"
tar -cJf "$out/aslr.tar.xz" -C "$out" aslr && rm -rf "$out/aslr"
