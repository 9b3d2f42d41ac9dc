#!/usr/bin/env python3
"""Summarises call c: workloads.py lm_train then mlp_4stream in one process per allocator, three
alternating rounds: per workload and allocator the median step ms per round, the device memory
after the workload (cudaMemGetInfo: MiB in all, and over the process's baseline), its ratio to
torch-expandable of the same round, and whether the values (losses, outputs) equal
torch-expandable's. Usage: summarize_c.py c > c_summary.txt"""
import json, os, statistics as st, sys

d = sys.argv[1]
allocs = ["torch-expandable", "base-tls", "tls", "base-stream", "stream"]
rounds = (1, 2, 3)
runs = {(a, r): json.load(open(os.path.join(d, f"wl_{a}_r{r}.json"))) for a in allocs for r in rounds}
for w in ("lm_train", "mlp_4stream"):
    print(f"\n{w} (30 steps; rounds 1-3, the second in reverse order):")
    print("| allocator | step ms (rounds) | x torch-expandable (median) | MiB in all (rounds) | x torch-expandable in all (rounds) | MiB over baseline (rounds) | values = torch-expandable |")
    print("|---|---|---|---|---|---|---|")
    for a in allocs:
        rs = [runs[(a, r)]["workloads"][w] for r in rounds]
        te = [runs[("torch-expandable", r)]["workloads"][w] for r in rounds]
        x = [r["median_step_ms"] / t["median_step_ms"] for r, t in zip(rs, te)]
        m = [r["used_bytes"] / t["used_bytes"] for r, t in zip(rs, te)]
        same = all(r["values"] == t["values"] for r, t in zip(rs, te))
        steps = ", ".join("%.2f" % r["median_step_ms"] for r in rs)
        used = ", ".join("%.0f" % (r["used_bytes"] / 2**20) for r in rs)
        over = ", ".join("%.0f" % (r["used_over_baseline_bytes"] / 2**20) for r in rs)
        ratios = ", ".join("%.3f" % v for v in m)
        print(f"| {a} | {steps} | {st.median(x):.3f} | {used} | {ratios} | {over} | {'yes' if same else 'NO'} |")
