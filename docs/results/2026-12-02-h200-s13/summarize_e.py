#!/usr/bin/env python3
"""Summarises call e: the tls plug-in with three CUDAPOOL_TLS_CACHE_BYTES settings over three
alternating rounds, per workload the process's device memory in all after it (MiB) and the median
step (ms), with the setting as the stats file recorded it. Usage: summarize_e.py e > e_summary.txt"""
import json, os, statistics as st, sys

d = sys.argv[1]
settings = ["256m", "4m", "0"]
wls = ["lm_train", "cnn_varbatch", "lm_infer_varseq", "mlp_4stream"]
print("| CUDAPOOL_TLS_CACHE_BYTES (stats file) | workload | MiB in all (rounds) | MiB over baseline (rounds) | step ms (rounds; median) | losses = 256m's |")
print("|---|---|---|---|---|---|")
ref = {}
for c in settings:
    for w in wls:
        mem, over, step, vals = [], [], [], []
        recorded = set()
        for r in (1, 2, 3):
            run = json.load(open(os.path.join(d, f"wl_{c}_r{r}.json")))
            recorded.add(json.load(open(os.path.join(d, f"stats_{c}_r{r}.json")))["tls_cache_bytes"])
            x = run["workloads"][w]
            mem.append(x["used_bytes"] / 2**20); over.append(x["used_over_baseline_bytes"] / 2**20)
            step.append(x["median_step_ms"]); vals.append(x["values"])
        if c == "256m": ref[w] = vals
        same = "yes" if vals == ref[w] else "NO"
        print(f"| {c} ({', '.join(str(v) for v in sorted(recorded))}) | {w} | {', '.join(f'{v:.0f}' for v in mem)} | "
              f"{', '.join(f'{v:.0f}' for v in over)} | {', '.join(f'{v:.2f}' for v in step)}; {st.median(step):.2f} | {same} |")
