#!/usr/bin/python3
"""Turns Google Benchmark JSON from `bench` into PNG plots.

  /usr/bin/python3 bench/plot.py BENCH.json OUT_DIR   (Debian python3-matplotlib) [--size 4096] [--allocators mutex,lockfree,...]

Writes OUT_DIR/pair_<size>_throughput.png: aggregate alloc+free pairs per second against host
threads, one line per allocator (log scale), from the median of the repetitions when present.
"""
import argparse
import collections
import json
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NAME = re.compile(r"^pair/(?P<alloc>[^/]+)/(?P<size>\d+)(?:/real_time)?/threads:(?P<threads>\d+)")


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows = collections.defaultdict(dict)  # (alloc, size) -> threads -> items/s
    has_median = any(b.get("aggregate_name") == "median" for b in data["benchmarks"])
    for b in data["benchmarks"]:
        if has_median and b.get("aggregate_name") != "median":
            continue
        m = NAME.match(b["name"])
        if not m or "items_per_second" not in b:
            continue
        rows[(m["alloc"], int(m["size"]))][int(m["threads"])] = b["items_per_second"]
    return data.get("context", {}), rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--allocators", default="")
    args = ap.parse_args()
    context, rows = load(args.json)
    wanted = [a for a in args.allocators.split(",") if a]
    os.makedirs(args.out, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (alloc, size), by_threads in sorted(rows.items()):
        if size != args.size or (wanted and alloc not in wanted):
            continue
        ts = sorted(by_threads)
        ax.plot(ts, [by_threads[t] / 1e6 for t in ts], marker="o", label=alloc)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("host threads")
    ax.set_ylabel("aggregate alloc+free pairs (M/s, median)")
    backend = context.get("cudapool_backend", "?")
    ax.set_title(f"{args.size} B pairs, {backend} backend, {context.get('num_cpus', '?')} CPUs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(args.out, f"pair_{args.size}_throughput.png")
    fig.savefig(path, dpi=120)
    print(path)


if __name__ == "__main__":
    main()
