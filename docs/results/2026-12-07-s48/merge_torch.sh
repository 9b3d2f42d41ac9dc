#!/usr/bin/env bash
# s48: the PyTorch workloads of calls a and d as two rounds. Each call ran workloads.py once per
# allocator (one round, the same order); its workloads.json keeps every allocator's whole run under
# "runs". This writes those runs out and summarises them again with workloads.py --summary (runs of
# one allocator are its rounds), so the page's table has medians over two rounds and each round's
# ratio to PyTorch's allocator of the same call. train_compare (torch.json) stays call a's (2 pairs);
# call d's one pair is read in the README.
#   bash docs/results/2026-12-07-s48/merge_torch.sh OUT.json [RUN_DIR]     (repository root)
# RUN_DIR: the run whose a/ and d/ are merged (default this script's folder, s48's; s49 passes its own).
set -euo pipefail
out=${1:?usage: merge_torch.sh OUT.json [RUN_DIR]}
here=${2:-$(dirname "$0")}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for call in a d; do
  mkdir -p "$tmp/$call"; tar -xJf "$here/$call/torch.tar.xz" -C "$tmp/$call"
  python3 - "$tmp/$call/torch/workloads.json" "$tmp/$call" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
for i, (label, run) in enumerate(runs.items()):
    run.pop("cudapool_stats_file", None)  # its path was the device's; the stats are in the run
    json.dump(run, open(f"{sys.argv[2]}/run_{i:02d}_{label}.json", "w"))
PY
done
python3 lib/adapters/torch/workloads.py --summary "$tmp"/a/run_*.json "$tmp"/d/run_*.json --out="$out" > /dev/null
