#!/usr/bin/env python3
"""Summarises call a's single-thread spread check (a/il/): per process and benchmark the median and
the minimum of its repetitions (run in random order), then across processes max/min of each, and
the correlation over all processes of each pool's medians with limit/stack's.
Usage: summarize_il.py a/il > a/il_summary.txt"""
import glob, json, os, statistics, sys

d = sys.argv[1]
procs = {}
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    tag = os.path.basename(f)[:-5]
    reps = {}
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].split("/")[0] + "/" + b["run_name"].split("/")[1]
        reps.setdefault(name, []).append(b["real_time"])
    procs[tag] = reps
names = sorted({n for r in procs.values() for n in r})
key = lambda t: (t.split("_")[0], int(t.split("_")[1]))
print("process        " + "  ".join(f"{n:>24s}" for n in names) + "   (median / min of the repetitions, ns)")
for tag in sorted(procs, key=key):
    r = procs[tag]
    print(f"{tag:14s} " + "  ".join(f"{statistics.median(r[n]):10.2f} / {min(r[n]):9.2f}" if n in r else " " * 24 for n in names))
print()
for kind in ("cpu", "free"):
    for n in names:
        med = [statistics.median(r[n]) for t, r in procs.items() if t.startswith(kind + "_") and n in r]
        mn = [min(r[n]) for t, r in procs.items() if t.startswith(kind + "_") and n in r]
        if med:
            print(f"{kind:5s} {n:18s} n={len(med):2d} medians {min(med):7.2f}-{max(med):7.2f} (max/min {max(med)/min(med):.3f}); "
                  f"minima {min(mn):7.2f}-{max(mn):7.2f} (max/min {max(mn)/min(mn):.3f})")

print()
stack = "limit/stack"
for n in names:
    if n == stack:
        continue
    pairs = [(statistics.median(r[n]), statistics.median(r[stack])) for r in procs.values() if n in r and stack in r]
    print(f"r({n}, {stack}) over {len(pairs)} processes' medians: {statistics.correlation(*zip(*pairs)):.2f}")
