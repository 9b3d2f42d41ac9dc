#!/usr/bin/python3
"""Turns Google Benchmark JSON from `bench` into PNG plots and a markdown summary.

  /usr/bin/python3 bench/plot.py BENCH.json OUT_DIR [--allocators mutex,tls,...] [--size 4096]

(matplotlib from Debian's python3-matplotlib). Uses the median of the repetitions when the JSON has
aggregates (--benchmark_repetitions=N), the median of the raw repetitions otherwise. Writes, and
prints the path of, every file it can:

  OUT_DIR/<workload>[_<param>]_throughput.png  aggregate items/s against host threads, one line per
                                               allocator (log-log), for each workload/parameter
  OUT_DIR/<workload>[_<param>]_speedup.png     the same divided by cudaMallocAsync's at each thread
                                               count (the speedup_vs_cudaMallocAsync figure), when
                                               cudaMallocAsync was measured
  OUT_DIR/replay_time_per_op.png               ns per replayed operation, per trace and allocator
  OUT_DIR/replay_reserved_over_live.png        peak reserved / peak live bytes, per trace and allocator
  OUT_DIR/summary.md                           medians at 1 and 16 threads for pair/4096 and streams,
                                               with ratios vs mutex and vs cudaMallocAsync; replay

Benchmark names: <workload>/<allocator>[/<param>...][/real_time][/threads:N].
"""
import argparse
import collections
import datetime
import json
import os
import re
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PEERS = ("cudaMalloc", "cudaMallocAsync", "cub")
BASELINE = "cudaMallocAsync"
REFERENCE = "mutex"
# Name components Google Benchmark appends that are not parameters of ours.
GB_SUFFIX = re.compile(r"^(real_time|manual_time|process_time|min_time:.*|repeats:.*|iterations:.*)$")
ITEM_LABEL = {
    "pair": "alloc+free pairs",
    "mix": "alloc+free pairs",
    "streams": "alloc+free pairs",
    "batch": "blocks allocated and freed",
    "prodcons": "blocks allocated and freed",
    "larson": "free+allocate operations",
    "serve": "requests",
}
WORKLOAD_ORDER = ["pair", "batch", "mix", "prodcons", "larson", "streams", "serve"]


class Row:
    """One benchmark instance: its median items/s and counters."""

    def __init__(self, workload, alloc, param, threads):
        self.workload, self.alloc, self.param, self.threads = workload, alloc, param, threads
        self.values = collections.defaultdict(list)  # metric -> values of the raw repetitions
        self.median = {}  # metric -> the aggregate median reported by Google Benchmark
        self.cv = {}  # metric -> the aggregate cv (stddev / mean of the repetitions), where reported
        self.round_medians = {}  # round -> items/s, where merge_rounds.py made the row from rounds

    def get(self, metric):
        if metric in self.median:
            return self.median[metric]
        vals = self.values.get(metric)
        return statistics.median(vals) if vals else None


def parse_name(name):
    parts = name.split("/")
    threads = 1
    keep = []
    for p in parts:
        m = re.match(r"^threads:(\d+)$", p)
        if m:
            threads = int(m.group(1))
        elif not GB_SUFFIX.match(p):
            keep.append(p)
    if len(keep) < 2:
        return None
    return keep[0], keep[1], "/".join(keep[2:]), threads


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    errors = []
    for b in data.get("benchmarks", []):
        run_name = b.get("run_name") or re.sub(r"_(mean|median|stddev|cv)$", "", b["name"])
        if b.get("error_occurred"):
            errors.append(f"{run_name}: {b.get('error_message', '?')}")
            continue
        parsed = parse_name(run_name)
        if not parsed:
            continue
        row = rows.setdefault(parsed, Row(*parsed))
        metrics = {k: v for k, v in b.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        agg = b.get("aggregate_name")
        if agg == "median":
            row.median.update(metrics)
            if isinstance(b.get("round_medians"), dict):
                row.round_medians = {int(r): v for r, v in b["round_medians"].items() if v is not None}
        elif agg == "cv":
            row.cv.update(metrics)
        elif b.get("run_type", "iteration") == "iteration" and not agg:
            for k, v in metrics.items():
                row.values[k].append(v)
    return data.get("context", {}), list(rows.values()), errors


def style(alloc):
    if alloc in PEERS:
        return dict(linestyle="--", marker="s", linewidth=1.6)
    if "-" in alloc:  # option variations (tls-nocheck, lockfree-backoff...)
        return dict(linestyle=":", marker=".", linewidth=1.0)
    return dict(linestyle="-", marker="o", linewidth=1.8)


def alloc_order(names):
    def key(a):
        if a in PEERS:
            return (2, PEERS.index(a), a)
        return (1 if "-" in a else 0, 0, a)

    return sorted(names, key=key)


def series_name(workload, param):
    return workload + ("_" + param.replace("/", "_") if param else "")


def save_threads_plot(fig, ax, ylabel, title, path):
    """Log-log axes over host threads, labels, legend; writes the figure and returns its path."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("host threads")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def plot_threads(out, context, workload, param, by_alloc, wanted):
    """by_alloc: alloc -> {threads: items/s}. Returns the written paths."""
    written = []
    backend = context.get("cudapool_backend", "?")
    cpus = context.get("num_cpus", "?")
    allocs = [a for a in alloc_order(by_alloc) if not wanted or a in wanted]
    if not allocs:
        return written
    what = ITEM_LABEL.get(workload, "items")
    title = f"{workload}{' ' + param if param else ''}: {backend} backend, {cpus} CPUs"
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for a in allocs:
        ts = sorted(by_alloc[a])
        ax.plot(ts, [by_alloc[a][t] / 1e6 for t in ts], label=a, **style(a))
    written.append(save_threads_plot(fig, ax, f"aggregate {what} (M/s, median)", title,
                                     os.path.join(out, series_name(workload, param) + "_throughput.png")))
    plt.close(fig)

    base = by_alloc.get(BASELINE)
    if base:
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        plotted = False
        for a in allocs:
            ts = [t for t in sorted(by_alloc[a]) if t in base and base[t] > 0]
            if not ts:
                continue
            ax.plot(ts, [by_alloc[a][t] / base[t] for t in ts], label=a, **style(a))
            plotted = True
        if plotted:
            ax.axhline(1.0, color="grey", linewidth=0.8)
            written.append(save_threads_plot(fig, ax, f"speedup over {BASELINE} (x, same threads)",
                                             f"speedup_vs_{BASELINE}: " + title,
                                             os.path.join(out, series_name(workload, param) + "_speedup.png")))
        plt.close(fig)
    return written


def plot_replay(out, context, replay, wanted):
    """replay: (trace param) -> alloc -> Row."""
    written = []
    traces = sorted(replay)
    allocs = alloc_order({a for t in traces for a in replay[t] if not wanted or a in wanted})
    if not traces or not allocs:
        return written
    backend = context.get("cudapool_backend", "?")
    width = 0.8 / len(allocs)

    def bars(metric, transform, ylabel, title, filename, log):
        fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 1.6 * len(traces) * max(1, len(allocs)) / 4), 4.8))
        any_bar = False
        for i, a in enumerate(allocs):
            xs, ys = [], []
            for j, t in enumerate(traces):
                row = replay[t].get(a)
                v = row.get(metric) if row else None
                if v is None or v <= 0:
                    continue
                xs.append(j + (i - (len(allocs) - 1) / 2) * width)
                ys.append(transform(v))
            if xs:
                ax.bar(xs, ys, width=width, label=a, hatch="//" if a in PEERS else None)
                any_bar = True
        if not any_bar:
            plt.close(fig)
            return
        ax.set_xticks(range(len(traces)))
        ax.set_xticklabels([t.replace("/immediate", "\n(immediate frees)").replace("/elided", "\n(events elided)")
                            for t in traces], fontsize=8)
        if log:
            ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}, {backend} backend", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        path = os.path.join(out, filename)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)

    bars("items_per_second", lambda v: 1e9 / v, "ns per operation (median)", "trace replay: time per operation",
         "replay_time_per_op.png", True)
    bars("reserved_over_live", lambda v: v, "peak reserved / peak live", "trace replay: memory held",
         "replay_reserved_over_live.png", True)
    return written


def fmt(v, digits=3):
    if v is None:
        return "–"
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def summary(out, context, src, series, counters, replay):
    lines = [
        "# bench summary",
        "",
        f"Source: `{os.path.basename(src)}` · backend: {context.get('cudapool_backend', '?')} · "
        f"{context.get('num_cpus', '?')} CPUs · run {context.get('date', '?')} · "
        f"written {datetime.date.today().isoformat()}",
        "",
        "Medians over repetitions. Throughput is aggregate over all threads. "
        f"`x {REFERENCE}` and `x {BASELINE}` are throughput ratios at the same thread count "
        f"(> 1: faster than {REFERENCE} / {BASELINE}).",
    ]
    for workload, param, title in [("pair", "4096", "pair/4096 (4 KiB alloc+free)"),
                                   ("streams", "same", "streams/same (16 streams, same-stream frees, 4 KiB)"),
                                   ("streams", "cross", "streams/cross (16 streams, cross-stream frees, 4 KiB)")]:
        by_alloc = series.get((workload, param))
        if not by_alloc:
            continue
        with_events = workload == "streams"
        lines += ["", f"## {title}", ""]
        head = ["allocator", "ns/pair @1", "M pairs/s @1", "M pairs/s @16",
                f"x {REFERENCE} @1", f"x {REFERENCE} @16", f"x {BASELINE} @1", f"x {BASELINE} @16"]
        if with_events:
            head += ["events/free @1", "events/free @16"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        ref = by_alloc.get(REFERENCE, {})
        base = by_alloc.get(BASELINE, {})
        for a in alloc_order(by_alloc):
            t = by_alloc[a]
            one, sixteen = t.get(1), t.get(16)
            cells = [a, fmt(1e9 / one if one else None), fmt(one / 1e6 if one else None),
                     fmt(sixteen / 1e6 if sixteen else None),
                     fmt(ratio(one, ref.get(1))), fmt(ratio(sixteen, ref.get(16))),
                     fmt(ratio(one, base.get(1))), fmt(ratio(sixteen, base.get(16)))]
            if with_events:
                ev = counters.get((workload, param), {}).get(a, {})
                cells += [fmt(ev.get(1)), fmt(ev.get(16))]
            lines.append("| " + " | ".join(cells) + " |")
    if replay:
        lines += ["", "## replay (one thread)", "",
                  f"`x {BASELINE}`: its ns/op over the allocator's (> 1: faster). reserved/live: peak bytes "
                  "reserved from the device over peak bytes live in the trace (– where the allocator cannot tell).",
                  "", f"| trace | allocator | ns/op | x {BASELINE} | reserved/live | peak reserved MiB |",
                  "|---|---|---|---|---|---|"]
        for tr in sorted(replay):
            base_row = None
            for key in (tr, tr.replace("/immediate", "").replace("/elided", "")):
                base_row = replay.get(key, {}).get(BASELINE) or base_row
            base_ns = 1e9 / base_row.get("items_per_second") if base_row and base_row.get("items_per_second") else None
            for a in alloc_order(replay[tr]):
                row = replay[tr][a]
                ips = row.get("items_per_second")
                ns = 1e9 / ips if ips else None
                lines.append(f"| {tr} | {a} | {fmt(ns)} | {fmt(ratio(base_ns, ns))} | "
                             f"{fmt(row.get('reserved_over_live'))} | {fmt(row.get('peak_reserved_MiB'))} |")
    path = os.path.join(out, "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("out")
    ap.add_argument("--allocators", default="", help="comma-separated allocators to plot (default: all)")
    ap.add_argument("--size", type=int, default=0, help="plot only this pair size (default: all)")
    args = ap.parse_args()
    context, rows, errors = load(args.json)
    wanted = {a for a in args.allocators.split(",") if a}
    os.makedirs(args.out, exist_ok=True)

    series = collections.defaultdict(dict)  # (workload, param) -> alloc -> threads -> items/s
    counters = collections.defaultdict(lambda: collections.defaultdict(dict))  # -> alloc -> threads -> events/free
    replay = collections.defaultdict(dict)  # trace param -> alloc -> Row
    for r in rows:
        ips = r.get("items_per_second")
        if r.workload == "replay":
            replay[r.param][r.alloc] = r
            continue
        if ips is None:
            continue
        series[(r.workload, r.param)].setdefault(r.alloc, {})[r.threads] = ips
        epf = r.get("events_per_free")
        if epf is not None:
            counters[(r.workload, r.param)][r.alloc][r.threads] = epf

    def order(key):
        w, p = key
        return (WORKLOAD_ORDER.index(w) if w in WORKLOAD_ORDER else len(WORKLOAD_ORDER), w,
                int(p) if p.isdigit() else 0, p)

    written = []
    for (workload, param) in sorted(series, key=order):
        if workload == "pair" and args.size and param != str(args.size):
            continue
        written += plot_threads(args.out, context, workload, param, series[(workload, param)], wanted)
    written += plot_replay(args.out, context, replay, wanted)
    written.append(summary(args.out, context, args.json, series, counters, replay))
    for p in written:
        print(p)
    for e in errors:
        print(f"note: benchmark failed: {e}")


if __name__ == "__main__":
    main()
