#!/usr/bin/python3
"""summary_2.py OUT: run_2.sh's replay A/B. Per trace, pool and mode: the new backend's and the old
one's ns per operation (median of each bundle's round medians), new/old per round (median), the
in-place query and record ns per call of each, and x cudaMallocAsync (median of its processes)."""
import glob
import json
import statistics
import sys

out = sys.argv[1]


def medians(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return {}
    return {b["run_name"]: b for b in d["benchmarks"] if b.get("aggregate_name") == "median"}


rounds = {}
for i in (0, 1):
    for path in sorted(glob.glob(f"{out}/ab/b{i}_*.json")):
        r = path.rsplit("_", 1)[1].split(".")[0]
        rounds.setdefault(r, {})[i] = medians(path)
cma = {}
for path in glob.glob(f"{out}/ab/cudaMallocAsync_*.json"):
    for k, b in medians(path).items():
        cma.setdefault(k.split("/")[2], []).append(b["real_time"])
names = sorted({n for r in rounds.values() for m in r.values() for n in m})
print("benchmark | new ns | old ns | new/old (median of rounds) | new query ns | old query ns | new record ns | old record ns | new x cMA")
for n in names:
    new = [r[0][n]["real_time"] for r in rounds.values() if 0 in r and n in r[0]]
    old = [r[1][n]["real_time"] for r in rounds.values() if 1 in r and n in r[1]]
    ratio = [r[0][n]["real_time"] / r[1][n]["real_time"] for r in rounds.values() if 0 in r and 1 in r and n in r[0] and n in r[1]]
    def med(v):
        return statistics.median(v) if v else float("nan")
    def field(i, f):
        return med([r[i][n].get(f, float("nan")) for r in rounds.values() if i in r and n in r[i]])
    trace = n.split("/")[2]
    x = med(cma.get(trace, [])) / med(new) if trace in cma and new else float("nan")
    print(f"{n} | {med(new):.1f} | {med(old):.1f} | {med(ratio):.3f} | {field(0, 'device_query_ns_per_call'):.0f} | "
          f"{field(1, 'device_query_ns_per_call'):.0f} | {field(0, 'device_record_ns_per_call'):.0f} | "
          f"{field(1, 'device_record_ns_per_call'):.0f} | {x:.2f}")
for t, v in sorted(cma.items()):
    print(f"cudaMallocAsync {t}: {statistics.median(v):.0f} ns")
