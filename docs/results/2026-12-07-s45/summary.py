#!/usr/bin/env python3
"""s45's tables from the probes' JSON (medians over the repetitions).
  summary.py replay.json                      per trace: ns per operation, x cudaMallocAsync,
                                              reserved/live, events per 1000 allocations
  summary.py --pair pair.json --serve serve.json   pairs/s; serve requests/s, failures, stream waits"""
import json
import statistics
import sys
from collections import defaultdict


def runs(path):
    by = defaultdict(list)
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        by[b.get("run_name", b["name"])].append(b)
    return by


def replay(path):
    table = defaultdict(dict)
    cma = {}
    for name, bs in runs(path).items():
        parts = name.split("/")
        if parts[0] == "limit":
            print(f"{name}: {statistics.median(b['real_time'] for b in bs):.1f} ns")
        if parts[0] != "replay":
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
            print(f"| {alloc} | {t:.1f} | {cma.get(trace, float('nan')) / t:.1f} | {r:.3f} | {e:.1f} | {n} |")


def pair(path):
    print("\npair (median M pairs/s)")
    for name, bs in sorted(runs(path).items()):
        print(f"{name}: {statistics.median(b['items_per_second'] for b in bs) / 1e6:.2f}")


def serve(path):
    rows = defaultdict(dict)
    for name, bs in runs(path).items():
        _, alloc, kind, _, threads = name.split("/")
        rows[(kind, threads)][alloc] = (statistics.median(b["items_per_second"] for b in bs),
                                        sum(b.get("failures", 0) for b in bs),
                                        max(b.get("stream_waits_per_1k_allocs", 0) for b in bs), len(bs))
    for (kind, threads), r in sorted(rows.items()):
        best = max(v[0] for v in r.values())
        peers = max([r[p][0] for p in ("cudaMallocAsync", "cub") if p in r] or [float("nan")])
        print(f"\nserve/{kind} {threads}: best {best:.0f} requests/s, better peer {peers:.0f}")
        print("| allocator | requests/s | x best | x better peer | failures | stream waits/1k | reps |")
        print("|---|---|---|---|---|---|---|")
        for alloc in sorted(r):
            q, f, w, n = r[alloc]
            print(f"| {alloc} | {q:.0f} | {q / best:.3f} | {q / peers:.2f} | {f:.0f} | {w:.2f} | {n} |")


args = sys.argv[1:]
if args and args[0] != "--pair" and args[0] != "--serve":
    replay(args[0])
for flag, fn in (("--pair", pair), ("--serve", serve)):
    if flag in args:
        fn(args[args.index(flag) + 1])
