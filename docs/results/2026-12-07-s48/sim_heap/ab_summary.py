"""s48: the per-benchmark medians and new/base ratios (within each round) of a bench/ab_bundles.sh
output directory (b0_<round>.json base, b1_<round>.json new), with each replay's reserved/live.
   python3 ab_summary.py OUT_DIR"""
import glob
import json
import re
import statistics as st
import sys

res = {}
for f in glob.glob(sys.argv[1] + "/b*_*.json"):
    m = re.search(r"b(\d)_(\d+)\.json$", f)
    for b in json.load(open(f))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            res.setdefault(b["run_name"], {}).setdefault(int(m[1]), {})[int(m[2])] = (b["real_time"], b.get("reserved_over_live"))
for n in sorted(res):
    d = res[n]
    rs = sorted(set(d[0]) & set(d[1]))
    q = [d[1][r][0] / d[0][r][0] for r in rs]
    print(f"{n}: base {st.median(d[0][r][0] for r in rs):.1f} ns, new {st.median(d[1][r][0] for r in rs):.1f} ns, "
          f"new/base {st.median(q):.3f} ({' '.join(f'{x:.3f}' for x in q)}); reserved/live {d[0][rs[0]][1]:.4f} -> {d[1][rs[0]][1]:.4f}")
