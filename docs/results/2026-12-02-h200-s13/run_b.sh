#!/usr/bin/env bash
# GPU call b of 2026-12-02 s13 (part 2 of 3): s9's run_b.sh (gpu-suite's soak part, 5 minutes,
# --sizes=mixed, 64 threads x 16 streams, the four variants side by side, beside its tests part;
# then its sanitizer part), then s12's run_e.sh for 60 s (the four variants' remap soaks side by
# side, --sizes=mixed --remap-ratio=1.01, stacks of any process alive 40 s after its end).
bash docs/results/2026-12-02-h200-s9/run_b.sh
sed -e 's/--duration=120/--duration=60/' -e 's/sleep 160/sleep 100/' docs/results/2026-12-02-h200-s12/run_e.sh > /tmp/run_e60.sh
CALL=b_remap bash /tmp/run_e60.sh
