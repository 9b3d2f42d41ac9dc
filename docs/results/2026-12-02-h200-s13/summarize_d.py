#!/usr/bin/env python3
"""Summarises call d: train_compare.py's three alternating pairs and workloads.py lm_train over three
alternating rounds (median step ms, x PyTorch's allocator of the same round, device MiB over the
baseline and in all, x torch-expandable). Usage: summarize_d.py d > d_summary.txt"""
import json, os, statistics as st, sys

d = sys.argv[1]
print("train_compare.py (100 steps, 20 warm-up; the library's default variant):")
ratios = []
for r in (1, 2, 3):
    a = json.load(open(os.path.join(d, f"tc_torch_r{r}.json")))
    b = json.load(open(os.path.join(d, f"tc_cudapool_r{r}.json")))
    ratios.append(b["median_step_ms"] / a["median_step_ms"])
    print(f"  round {r}: torch {a['median_step_ms']:.3f} ms, cudapool {b['median_step_ms']:.3f} ms, x torch {ratios[-1]:.3f}, "
          f"parameters identical: {a['params_sha256'] == b['params_sha256']}")
print(f"  median x torch {st.median(ratios):.3f}")
allocs = ["torch", "torch-expandable", "tls", "lockfree", "mutex", "stream"]
rows = {}
for a in allocs:
    for r in (1, 2, 3):
        w = json.load(open(os.path.join(d, f"wl_{a}_r{r}.json")))
        lm = w["workloads"]["lm_train"]
        over = lm["used_over_baseline_bytes"]
        rows.setdefault(a, []).append((lm["median_step_ms"], over / 2**20, lm["used_bytes"] / 2**20, lm["values"]))
print("\nworkloads.py lm_train alone (40 steps), three rounds alternating (the second reversed):")
print("| allocator | step ms (rounds) | x torch (per round; median) | MiB over baseline (rounds) | MiB in all (rounds) | x torch-expandable in all (median) | losses = torch |")
print("|---|---|---|---|---|---|---|")
for a in allocs:
    x = [rows[a][i][0] / rows["torch"][i][0] for i in range(3)]
    e = [rows[a][i][2] / rows["torch-expandable"][i][2] for i in range(3)]
    same = all(rows[a][i][3] == rows["torch"][i][3] for i in range(3))
    print(f"| {a} | {', '.join(f'{v[0]:.2f}' for v in rows[a])} | {', '.join(f'{v:.3f}' for v in x)}; **{st.median(x):.3f}** | "
          f"{', '.join(f'{v[1]:.0f}' for v in rows[a])} | {', '.join(f'{v[2]:.0f}' for v in rows[a])} | {st.median(e):.3f} | {'yes' if same else 'NO'} |")
