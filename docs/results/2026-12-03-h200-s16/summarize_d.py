#!/usr/bin/python3
"""summarize_d.py D_DIR: call d's replay/tls, a68960c (base) against push_released (new), two
alternating rounds: ns per operation (median of each process's 3 x 0.5 s) and new / base."""
import glob, json, re, statistics, sys

v = {}
for f in sorted(glob.glob(sys.argv[1] + "/replay_*_r*.json")):
    b, r = re.search(r"replay_(base|new)_r(\d+)", f).groups()
    for x in json.load(open(f))["benchmarks"]:
        if x.get("aggregate_name") == "median":
            n = x["name"].replace("/real_time_median", "")
            v.setdefault((n, b), []).append(x["real_time"])
print("| benchmark | base ns (rounds) | new ns (rounds) | new / base (medians) | new / base (minima) |")
print("|---|---|---|---|---|")
for n in sorted({k[0] for k in v}):
    o, w = v.get((n, "base"), []), v.get((n, "new"), [])
    if o and w:
        print(f"| {n} | {', '.join(f'{x:.1f}' for x in o)} | {', '.join(f'{x:.1f}' for x in w)} | "
              f"{statistics.median(w) / statistics.median(o):.3f} | {min(w) / min(o):.3f} |")
