#!/usr/bin/env python3
"""Summary of pair_ab.sh: per benchmark, each round's median ns per pair of this library (new,
b0_<round>.json) and of the pre-heap main's (b1_<round>.json), and the median over rounds of new/old (issue 14: within 5%, i.e.
new/old <= 1.05).
    python3 pair_ab.py OUT_DIR [--markdown FILE]"""
import glob
import json
import os
import statistics
import sys


def medians(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"{path}: skipped ({e})", file=sys.stderr)
        return {}
    return {b["run_name"]: b["real_time"] for b in data.get("benchmarks", [])
            if b.get("aggregate_name") == "median"}


def main():
    out = sys.argv[1]
    rounds = sorted({int(os.path.basename(p)[3:-5]) for p in glob.glob(os.path.join(out, "b0_*.json"))})
    table = {}
    for r in rounds:
        new = medians(os.path.join(out, f"b0_{r}.json"))
        old = medians(os.path.join(out, f"b1_{r}.json"))
        for name in sorted(new.keys() & old.keys()):
            table.setdefault(name, []).append((new[name], old[name]))
    lines = ["| benchmark | new ns (rounds) | main's ns (rounds) | new/main's, median of rounds |",
             "|---|---|---|---|"]
    for name, pairs in table.items():
        ratio = statistics.median(n / o for n, o in pairs)
        lines.append(f"| {name.replace('/real_time', '')} | {', '.join(f'{n:.1f}' for n, _ in pairs)} | "
                     f"{', '.join(f'{o:.1f}' for _, o in pairs)} | {ratio:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if "--markdown" in sys.argv:
        with open(sys.argv[sys.argv.index("--markdown") + 1], "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
