#!/usr/bin/env bash
# s40's one call for a short device budget (carry .bundle, built at the session's HEAD, and
# .bundle_main, abb4709's bench as bin.tar.xz): everything within TOTAL seconds from now, in order:
#  1. s38's run_h.sh: lm_infer_varseq alone in fresh processes (lockfree with its trace and stats,
#     stream, torch-expandable) and its trace replayed on cuda and sim: bf585fc's growth placement
#     on the GPU (s37/s38 saw the pools map 1,312 MiB; the sim predicts about 1,080);
#  2. s30's pair_ab.sh: issue 14's hot-path check against abb4709 (pair/tls, pair/stream, 1 and 16
#     threads, 4 alternating rounds);
#  3. run_m.sh: mlp_4stream's replay on the sim and the CUDA backend on the same host;
#  4. gpu-suite's replay part (every trace, the four variants and cudaMallocAsync, REPLAY_ROUNDS
#     rounds) with what is left.
#   OUT=... TOTAL=... bash docs/results/2026-12-07-h100-s40/run_a.sh
# At most 8 files come back: probe.log, probe.tar.xz, pair_ab.tar.xz, mlp_probe.tar.xz, gpu-run.log,
# gpu.txt, replay.tar.xz.
set -u
out=${OUT:?OUT}
deadline=$(( $(date +%s) + ${TOTAL:-560} ))
here=$(dirname "$0")
OUT=$out BUDGET=110 bash "$here/../2026-12-06-h100-s38/run_h.sh"
mkdir -p "$out/pair_ab"
bash "$here/../2026-12-05-h100-s30/pair_ab.sh" "$out/pair_ab" .bundle .bundle_main > "$out/pair_ab/pair_ab.log" 2>&1
python3 "$here/../2026-12-05-h100-s30/pair_ab.py" "$out/pair_ab" | tee "$out/pair_ab/summary.txt"
tar -cJf "$out/pair_ab.tar.xz" -C "$out" pair_ab && rm -rf "$out/pair_ab"
mkdir -p "$out/mlp"
OUT=$out/mlp bash "$here/run_m.sh" | tee "$out/mlp/mlp_probe.txt"
tar -cJf "$out/mlp_probe.tar.xz" -C "$out" mlp && rm -rf "$out/mlp"
left=$(( deadline - $(date +%s) - 10 ))
echo "replay gets $left s"
export LD_LIBRARY_PATH=$PWD/.bundle/lib
[ -x .bundle/bin/bench ] && [ -f .bundle/lib/libcudapool_torch.so ] || tar -xJf .bundle/bin.tar.xz -C .bundle
REPLAY_ROUNDS=${REPLAY_ROUNDS:-2} bash .bundle/gpu-run "$out" "$left" replay:150
cat "$out/gpu-run.log"
ls "$out"
