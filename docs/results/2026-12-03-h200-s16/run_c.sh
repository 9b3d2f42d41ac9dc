#!/usr/bin/env bash
# GPU call c of 2026-12-03 s16 (part 3 of 3): s10's run_c.sh: gpu-suite's torch part for every
# variant, two rounds (TORCH_ROUNDS=2, alternating; train_compare.py 100 steps; workloads.py 40
# steps: torch, torch-expandable, cudaMallocAsync, the four variants with the plug-in's defaults,
# then tls with the library's defaults once), then its spread part.
bash docs/results/2026-12-02-h200-s10/run_c.sh
