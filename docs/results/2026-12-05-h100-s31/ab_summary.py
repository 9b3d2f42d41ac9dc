#!/usr/bin/env python3
"""Summary of an A/B by bench/ab_bundles.sh with two bundles: per benchmark, the median over rounds of
each bundle's per-process median (ns), and the median of the rounds' ratios b1/b0 (> 1: b0 faster),
with each round's ratio.
    python3 ab_summary.py AB_DIR"""
import glob
import json
import os
import statistics
import sys


def main():
    ab = sys.argv[1]
    res = {}
    for f in sorted(glob.glob(os.path.join(ab, "b*_*.json"))):
        bundle, rnd = os.path.basename(f)[:-5].split("_")
        with open(f) as fh:
            for b in json.load(fh).get("benchmarks", []):
                if b.get("aggregate_name") == "median":
                    res.setdefault(b["run_name"], {}).setdefault(bundle, {})[int(rnd)] = b["real_time"]
    print(f"{'benchmark':60s} {'b0 ns':>8s} {'b1 ns':>8s} {'b1/b0':>6s}  rounds")
    for name, v in sorted(res.items()):
        b0, b1 = v.get("b0", {}), v.get("b1", {})
        rounds = sorted(set(b0) & set(b1))
        if not rounds:
            continue
        ratios = [b1[r] / b0[r] for r in rounds]
        print(f"{name:60s} {statistics.median(b0.values()):8.1f} {statistics.median(b1.values()):8.1f} "
              f"{statistics.median(ratios):6.2f}  {' '.join(f'{x:.2f}' for x in ratios)}")


if __name__ == "__main__":
    main()
