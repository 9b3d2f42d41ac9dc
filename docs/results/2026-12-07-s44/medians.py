#!/usr/bin/python3
"""The probes' summary: per benchmark of a bench JSON with repetitions, the median real time, the
repetitions' range over it, events per 1000 allocations and reserved/live.
    python3 docs/results/2026-12-07-s44/medians.py OUT.json"""
import json
import sys

runs = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("run_type") == "iteration":
        runs.setdefault(b["run_name"], []).append(b)
for name, bs in sorted(runs.items()):
    t = sorted(x["real_time"] for x in bs)
    b = bs[0]
    print(f"{name:58s} median {t[len(t)//2]:7.1f} ns  range {100 * (t[-1] - t[0]) / t[len(t)//2]:3.0f}%"
          f"  events/1k allocs {b.get('events_per_1k_allocs', 0):6.1f}  reserved/live {b.get('reserved_over_live', 0):.3f}")
