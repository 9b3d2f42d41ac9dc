#!/usr/bin/env python3
"""s45's tables from probe_arenas.sh's JSON: per replay the median ns per operation over the
repetitions, reserved/live, events per 1000 allocations and the ratio to cudaMallocAsync on the same
trace; per pair benchmark the median pairs/s. Usage: summary.py replay.json [pair.json]"""
import json
import statistics
import sys
from collections import defaultdict


def runs(path):
    by = defaultdict(list)
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        by[b["run_name"] if "run_name" in b else b["name"]].append(b)
    return by


def main():
    by = runs(sys.argv[1])
    table = defaultdict(dict)
    cma = {}
    for name, bs in by.items():
        parts = name.split("/")
        if parts[0] != "replay":
            if parts[0] == "limit":
                print(f"{name}: {statistics.median(b['real_time'] for b in bs):.1f} ns")
            continue
        alloc, trace = parts[1], parts[2]
        t = statistics.median(b["real_time"] for b in bs)
        if alloc == "cudaMallocAsync":
            cma[trace] = t
        table[trace][alloc] = (t, bs[0].get("reserved_over_live", 0.0), bs[0].get("events_per_1k_allocs", 0.0),
                               bs[0].get("peak_live_MiB", 0.0), len(bs))
    for trace in sorted(table):
        live = max(v[3] for v in table[trace].values())
        print(f"\n{trace} (live peak {live:.0f} MiB; cudaMallocAsync {cma.get(trace, float('nan')):.1f} ns)")
        print("| allocator | ns/op | x cudaMallocAsync | reserved/live | events/1k allocs | reps |")
        print("|---|---|---|---|---|---|")
        for alloc in sorted(table[trace]):
            t, r, e, _, n = table[trace][alloc]
            x = cma.get(trace, float("nan")) / t
            print(f"| {alloc} | {t:.1f} | {x:.1f} | {r:.3f} | {e:.1f} | {n} |")
    if len(sys.argv) > 2:
        print("\npair (median pairs/s)")
        for name, bs in sorted(runs(sys.argv[2]).items()):
            print(f"{name}: {statistics.median(b['items_per_second'] for b in bs) / 1e6:.2f} M/s")


main()
