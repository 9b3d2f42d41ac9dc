#!/usr/bin/env python3
"""summarize_sim_ab.py DIR: the dev machine's A/B (run_sim_ab.sh): per benchmark the three rounds'
ns per operation of base and new (sorted) and the ratio of their medians."""
import collections, glob, json, os, statistics, sys

vals = collections.defaultdict(list)
for f in glob.glob(os.path.join(sys.argv[1], "loc_*_*.json")):
    side = "base" if os.path.basename(f).startswith("loc_base_") else "new"
    for b in json.load(open(f))["benchmarks"]:
        vals[(b["run_name"], side)].append(b["real_time"])
print("| benchmark | base (rounds) | new (rounds) | new / base (medians) |")
print("|---|---|---|---|")
for n in sorted({k[0] for k in vals}):
    b, w = sorted(vals[(n, "base")]), sorted(vals[(n, "new")])
    print(f"| {n.replace('/real_time', '')} | {', '.join(f'{v:.1f}' for v in b)} | {', '.join(f'{v:.1f}' for v in w)} | "
          f"{statistics.median(w) / statistics.median(b):.3f} |")
