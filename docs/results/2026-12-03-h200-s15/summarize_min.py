#!/usr/bin/env python3
"""summarize_min.py DIR...: replay over every process of both sides in calls a and d (6 per side):
per benchmark the minimum and median of base and new (ns per operation), new's minimum and median
over base's, and new against cudaMallocAsync's replay of the same trace (its processes of both
sides: the peer's code did not change) and against the 80 ns target of issue 14."""
import collections, glob, json, os, statistics, sys

vals = collections.defaultdict(list)
for d in sys.argv[1:]:
    for side in ("bench_base", "bench"):
        for f in glob.glob(os.path.join(d, f"{side}_replay_r*.json")):
            for b in json.load(open(f))["benchmarks"]:
                if b.get("run_type") != "aggregate":
                    vals[(b["run_name"].replace("/real_time", ""), side)].append(b["real_time"])
cma = {}
for (n, side), v in vals.items():
    if n.startswith("replay/cudaMallocAsync/"):
        cma.setdefault(n.split("/")[2], []).extend(v)
print("| benchmark | base min / median | new min / median | new / base (min; median) | cudaMallocAsync median / new median | new median <= 80 ns |")
print("|---|---|---|---|---|---|")
for n in sorted({k[0] for k in vals}):
    if n.startswith("replay/cudaMallocAsync") or not n.startswith("replay/"):
        continue
    b, w = vals[(n, "bench_base")], vals[(n, "bench")]
    mb, mw = statistics.median(b), statistics.median(w)
    trace = n.split("/")[2]
    x = statistics.median(cma[trace]) / mw if trace in cma and not n.endswith("/elided") else float("nan")
    print(f"| {n} | {min(b):.1f} / {mb:.1f} | {min(w):.1f} / {mw:.1f} | {min(w) / min(b):.3f}; {mw / mb:.3f} | "
          f"{x:.1f} | {'yes' if mw <= 80 else 'no'} |")
for t, v in sorted(cma.items()):
    print(f"\ncudaMallocAsync {t}: median {statistics.median(v):.0f} ns, min {min(v):.0f} ns over {len(v)} processes", end="")
print()
