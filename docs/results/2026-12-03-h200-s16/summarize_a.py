#!/usr/bin/python3
"""summarize_a.py A_DIR: call a's ab/ (serve/stream/mixed, base 448f370 against new, alternating
rounds) as a table: requests/s per round (median of the process's 3 repetitions), stream queries
and events per 1000 allocations, reserved MiB."""
import glob, json, re, statistics, sys

d = sys.argv[1] + "/ab"
rows = {}
for f in sorted(glob.glob(d + "/serve_*_r*.json")):
    b, r = re.search(r"serve_(base|new)_r(\d+)", f).groups()
    for x in json.load(open(f))["benchmarks"]:
        if x.get("aggregate_name") != "median":
            continue
        t = x["name"].split("threads:")[1].split("_")[0]
        rows.setdefault((t, b), []).append(
            (int(r), x["items_per_second"], x.get("device_stream_queries_per_1k_allocs", float("nan")),
             x.get("events_per_1k_allocs", float("nan")), x.get("reserved_MiB", float("nan")),
             x.get("failures", float("nan")), x.get("stream_waits_per_1k_allocs", float("nan"))))
print("| threads | build | kreq/s (rounds) | median | stream queries /1k allocs | events /1k allocs | reserved MiB | failures | stream waits /1k |")
print("|---|---|---|---|---|---|---|---|---|")
med = {}
for (t, b) in sorted(rows, key=lambda k: (int(k[0]), k[1])):
    v = sorted(rows[(t, b)])
    ips = [x[1] / 1e3 for x in v]
    med[(t, b)] = statistics.median(ips)
    f = lambda i: ", ".join(f"{x[i]:.0f}" for x in v)
    print(f"| {t} | {b} | {', '.join(f'{x:.1f}' for x in ips)} | {med[(t, b)]:.1f} | {f(2)} | {f(3)} | {f(4)} | {f(5)} | {f(6)} |")
for t in sorted({k[0] for k in med}, key=int):
    if (t, "base") in med and (t, "new") in med:
        print(f"\n{t} threads: new / base (medians of rounds) {med[(t, 'new')] / med[(t, 'base')]:.3f}", end="")
print()
