#!/usr/bin/env python3
"""Call a's A/B of s11: serve/<tls|lockfree>/small at 16 and 64 threads, bench_old (1ac490b) and
bench (this session's library) in alternating fresh processes. Prints requests/s (thousands) per
round and the ratio of the medians. Usage: ab_serve.py a/ab"""
import glob
import json
import statistics
import sys

res = {}
for f in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    binary, variant, rnd = f.split("/")[-1][:-5].rsplit("_", 2)
    for b in json.load(open(f))["benchmarks"]:
        threads = b["name"].split("threads:")[1]
        res.setdefault((variant, threads, binary), []).append(
            (int(rnd), b["items_per_second"] / 1e3, b.get("grows_per_1k_allocs"), b.get("reserved_MiB")))
for variant in ("tls", "lockfree"):
    for threads in ("16", "64"):
        old = sorted(res[(variant, threads, "bench_old")])
        new = sorted(res[(variant, threads, "bench")])
        ratio = statistics.median(x[1] for x in new) / statistics.median(x[1] for x in old)
        print(f"serve/{variant}/small threads {threads}: old {[round(x[1], 1) for x in old]} "
              f"new {[round(x[1], 1) for x in new]} median new/old {ratio:.3f}; "
              f"grows/1k old {[round(x[2], 2) for x in old]} new {[round(x[2], 2) for x in new]}")
