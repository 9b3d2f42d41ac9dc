#!/usr/bin/env python3
"""Call a of s12: per process, lm_train's median step time (ms, the first steps included as
workloads.py counts them), the device memory after it (MiB over the baseline, cudaMemGetInfo) and,
for the plug-in, its stats at exit (CUDAPOOL_STATS: heap peak mapped, maps, unmaps, remap_waits).
Then per allocator the medians over the rounds, and step time over PyTorch's of the same round.
Usage: summarize_a.py DIR (the unpacked a/)."""
import glob
import json
import os
import re
import statistics
import sys

M = 1 << 20
d = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(d, "wl_*_r*.json"))):
    tag, rnd = re.match(r"wl_(.+)_r(\d+)\.json", os.path.basename(f)).groups()
    lm = json.load(open(f))["workloads"]["lm_train"]
    st = {}
    sf = os.path.join(d, f"stats_{tag}_r{rnd}.json")
    if os.path.exists(sf):
        s = json.load(open(sf))["devices"][0]["stats"]
        st = dict(s["heap"])
    rows.append({"tag": tag, "round": int(rnd), "ms": lm["median_step_ms"], "mib": lm["used_over_baseline_bytes"] // M,
                 "peak_mapped": st.get("peak_mapped_bytes", 0) // M if st else None, "maps": st.get("maps"),
                 "unmaps": st.get("unmaps"), "waits": st.get("remap_waits")})
print("| process | round | median step ms | MiB over baseline | heap peak mapped MiB | maps | unmaps | remap waits |")
print("|---|---|---|---|---|---|---|---|")
for r in sorted(rows, key=lambda r: (r["tag"], r["round"])):
    print(f"| {r['tag']} | {r['round']} | {r['ms']:.2f} | {r['mib']} | {'-' if r['peak_mapped'] is None else r['peak_mapped']} | "
          f"{'-' if r['maps'] is None else r['maps']} | {'-' if r['unmaps'] is None else r['unmaps']} | "
          f"{'-' if r['waits'] is None else r['waits']} |")
torch = {r["round"]: r["ms"] for r in rows if r["tag"] == "torch"}
print()
print("| allocator | MiB over baseline: min-max (median) | step time x torch of the round: median (min-max) |")
print("|---|---|---|")
for tag in sorted({r["tag"] for r in rows}):
    rs = [r for r in rows if r["tag"] == tag]
    mib = [r["mib"] for r in rs]
    x = [r["ms"] / torch[r["round"]] for r in rs if r["round"] in torch]
    xs = f"{statistics.median(x):.3f} ({min(x):.3f}-{max(x):.3f})" if x else "-"
    print(f"| {tag} | {min(mib)}-{max(mib)} ({statistics.median(mib):.0f}) | {xs} |")
