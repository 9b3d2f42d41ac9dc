#!/usr/bin/python3
# Usage: python3 docs/results/2026-12-06-h100-s34/serve_ab.py DIR (DIR: serve_ab/ unpacked from b/serve_ab.tar.xz)
"""serve_ab.py DIR: the A/B of bench/ab_bundles.sh over serve points: per point, each
round's new/base ratio of items_per_second (median of the process's repetitions), their median,
and each bundle's median requests/s and counters."""
import json, statistics, sys, glob, re, collections
d = sys.argv[1]
vals = collections.defaultdict(dict)   # (bundle, round) -> name -> benchmark
for f in glob.glob(f"{d}/b*_*.json"):
    m = re.search(r"b(\d+)_(\d+)\.json$", f)
    b, r = int(m.group(1)), int(m.group(2))
    for x in json.load(open(f))["benchmarks"]:
        if x.get("aggregate_name") == "median":
            vals[(b, r)][x["run_name"]] = x
rounds = sorted({r for (_, r) in vals})
names = sorted({n for v in vals.values() for n in v})
keys = ["events_per_1k_allocs", "device_record_ns_per_call", "device_query_ns_per_call",
        "closed_slow_path_per_1k_allocs", "device_stream_queries_per_1k_allocs", "reserved_MiB"]
print("point | new/base per round | median | new req/s | base req/s | new vs base: " + ", ".join(keys))
for n in names:
    ratios, new, base = [], [], []
    for r in rounds:
        a, b = vals[(0, r)].get(n), vals[(1, r)].get(n)
        if a and b:
            ratios.append(a["items_per_second"] / b["items_per_second"])
            new.append(a); base.append(b)
    if not ratios:
        continue
    med = lambda xs, k: statistics.median(x.get(k, float("nan")) for x in xs)
    extra = ", ".join(f"{med(new, k):.4g}/{med(base, k):.4g}" for k in keys)
    print(f"{n.replace('/real_time','')} | {' '.join(f'{x:.3f}' for x in ratios)} | {statistics.median(ratios):.3f} | "
          f"{med(new, 'items_per_second'):.0f} | {med(base, 'items_per_second'):.0f} | {extra}")
