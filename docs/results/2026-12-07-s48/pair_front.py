"""s48: pair_front.sh's summary (s49: and streams/same, the owner's path). Per thread count and variant: the median over the rounds of each
allocator's pair time (ns per allocate+free, the median of its repetitions), and the median over the
rounds of the ratio <v>-arenas / <v> within a round (both processes of one round)."""
import glob
import json
import os
import re
import statistics
import sys

out = sys.argv[1]
times = {}  # (allocator, threads) -> {round: ns}
for path in glob.glob(os.path.join(out, "*_t*_r*.json")):
    m = re.fullmatch(r"(.+)_t(\d+)_r(\d+)\.json", os.path.basename(path))
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        continue
    for b in doc.get("benchmarks", []):
        if b.get("aggregate_name") == "median" and not b.get("error_occurred"):
            times.setdefault((m[1], int(m[2])), {})[int(m[3])] = b["real_time"]
# pair's files are <allocator>_t..., streams' (s49's WORKLOADS) streams_<allocator>_t...
for prefix, threads, v in [(p, t, v) for p in ("", "streams_") for t in (1, 16) for v in ("tls", "stream")]:
    plain, front = times.get((prefix + v, threads), {}), times.get((prefix + v + "-arenas", threads), {})
    if prefix and not plain and not front:
        continue  # s48's run: pair only
    rounds = sorted(set(plain) & set(front))
    label = f"{prefix.rstrip('_')} threads" if prefix else "threads"
    if not rounds:
        print(f"{label} {threads} {v}: no complete round")
        continue
    ratios = [front[r] / plain[r] for r in rounds]
    print(f"{label} {threads} {v}: {statistics.median(plain.values()):.1f} ns, "
          f"{v}-arenas {statistics.median(front.values()):.1f} ns, "
          f"ratio median {statistics.median(ratios):.3f} (rounds: {' '.join(f'{x:.3f}' for x in ratios)})")
