#!/usr/bin/env bash
# GPU call b of 2026-12-03 s17 (part 2 of 4): s9's run_b.sh: gpu-suite's soak part (5 minutes,
# --sizes=mixed, 64 threads x 16 streams, the four variants side by side) beside its tests part
# (every test binary of the bundle; the injected faults), then its sanitizer part. Bundle without
# bench, multi_gpu_test, replay_memory_test, trace_test and the PyTorch files (64 MiB limit).
bash docs/results/2026-12-02-h200-s9/run_b.sh
