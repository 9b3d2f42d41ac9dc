#!/usr/bin/python3
"""Writes docs/results.md, the results page, from ONE GPU-suite output directory.

  /usr/bin/python3 docs/make_results.py RUN_DIR [--date D] [--host H] [--command C] [--note N]
                                        [--out docs/results.md] [--plots DIR]

(matplotlib from Debian's python3-matplotlib; bench/plot.py is imported for parsing and plots.)
RUN_DIR holds what `.ci/gpu-suite OUT <part>` writes: bench.json (bench), workloads.json and
torch*.json (torch), stress_<variant>.json and soak*.log (soak), stress_peer_<allocator>.json
(peers), spread.json (spread), tests.log and faults.log (tests), sanitizer.log (sanitizer), command.txt
(bench/run_suite.sh). Every figure on the page comes from those files; a missing input gives a
line saying it was not in this run. Sections, in order: serve, PyTorch, replay, pair scaling and
prodcons, other microbenchmarks, the single-thread spread, peers under stress, pool stress and soaks (with tests, injected
faults and the sanitizer). Plots go to --plots (default: results/plots beside --out; the *.png there
are replaced) and are linked relative to the page. --date, --host and --command default to what the run's files say.
"""
import argparse
import collections
import glob
import json
import os
import random
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
import plot  # noqa: E402  (bench/plot.py: load, alloc_order, plot_threads, plot_replay, fmt)
import merge_rounds  # noqa: E402  (bench/merge_rounds.py: read_json)

plt = plot.plt
plot.ITEM_LABEL.setdefault("serve", "requests")
PEERS = plot.PEERS
BASELINE = plot.BASELINE
fmt = plot.fmt
ratio = plot.ratio
NOT_IN_RUN = "_Not in this run_"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def read_json(path):
    return merge_rounds.read_json(path, "make_results: cannot read")


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


class Page:
    def __init__(self, run_dir, out, plots_dir):
        self.run_dir, self.out, self.plots_dir = run_dir, out, plots_dir
        self.lines = []
        self.used = []  # input files read

    def rel(self, path):
        return os.path.relpath(path, os.path.dirname(os.path.abspath(self.out)))

    def src(self, name):
        path = os.path.join(self.run_dir, name)
        return path if os.path.exists(path) else None

    def link(self, path):
        return f"[{os.path.basename(path)}]({self.rel(path)})"

    def add(self, *lines):
        self.lines.extend(lines)

    def image(self, path, alt):
        self.add("", f"![{alt}]({self.rel(path)})")


# ---------------------------------------------------------------------------------------------
# bench.json


class Bench:
    def __init__(self, path):
        self.path = path
        self.context, rows, self.errors = plot.load(path) if path else ({}, [], [])
        self.rows = rows
        # (workload, param) -> alloc -> threads -> Row
        self.by = collections.defaultdict(lambda: collections.defaultdict(dict))
        for r in rows:
            self.by[(r.workload, r.param)][r.alloc][r.threads] = r
        # (workload, param) -> alloc -> threads -> error message (plot.load drops these rows)
        self.failed = collections.defaultdict(lambda: collections.defaultdict(dict))
        for e in self.errors:
            name, _, msg = e.partition(": ")
            parsed = plot.parse_name(name)
            if parsed:
                w, a, p, t = parsed
                self.failed[(w, p)][a][t] = msg

    def workload(self, name):
        return {p: allocs for (w, p), allocs in self.by.items() if w == name}

    def series_cv(self, workload, param, metric="items_per_second"):
        """alloc -> threads -> the cv of the metric over the repetitions (where reported)."""
        out = {}
        for a, ts in self.by.get((workload, param), {}).items():
            vals = {t: r.cv[metric] for t, r in ts.items() if metric in r.cv}
            if vals:
                out[a] = vals
        return out

    def series_rounds(self, workload, param):
        """alloc -> threads -> {round: items/s}, where the rows came from rounds (merge_rounds.py)."""
        out = {}
        for a, ts in self.by.get((workload, param), {}).items():
            vals = {t: r.round_medians for t, r in ts.items() if r.round_medians}
            if vals:
                out[a] = vals
        return out

    def rounds(self, workload, param):
        """The rounds per point (merge_rounds.py's `rounds`), when one number for all."""
        n = {r.median.get("rounds") for ts in self.by.get((workload, param), {}).values() for r in ts.values()}
        n.discard(None)
        return int(n.pop()) if len(n) == 1 else None

    def repetitions(self, workload, param):
        """The repetitions per point (Google Benchmark's `repetitions`), when one number for all."""
        n = {r.median.get("repetitions") for ts in self.by.get((workload, param), {}).values() for r in ts.values()}
        n.discard(None)
        return int(n.pop()) if len(n) == 1 else None

    def series(self, workload, param, metric="items_per_second"):
        """alloc -> threads -> value."""
        out = {}
        for a, ts in self.by.get((workload, param), {}).items():
            vals = {t: r.get(metric) for t, r in ts.items() if r.get(metric) is not None}
            if vals:
                out[a] = vals
        return out


def threads_of(series):
    return sorted({t for ts in series.values() for t in ts})


# ---------------------------------------------------------------------------------------------
# sections


def equal_allocators_score(k, n_rounds, cv, trials=4000):
    """What `x best of run` (the median over n_rounds of each round's ratio to the best of k
    allocators) gives for k equal allocators whose round figures stray at random by `cv` (normal):
    the median over the trials, and the share of trials at >= 0.98. The floor of that measure on
    a host with this spread: a seeded simulation, the same on every run of this script."""
    rng = random.Random(15)
    scores = []
    for _ in range(trials):
        rs = []
        for _ in range(n_rounds):
            xs = [rng.gauss(1.0, cv) for _ in range(k)]
            rs.append(xs[0] / max(xs))
        scores.append(statistics.median(rs))
    return statistics.median(scores), sum(x >= 0.98 for x in scores) / trials


def pool_groups(allocs, prefix="", also=()):
    """The pools whose targets a section reads, in two groups: the variants as they are (labels
    without an option suffix, after `prefix`; plus `also`) and behind stream arenas (`<v>-arenas`,
    since s45). The second is empty when the run has no arena rows."""
    names = {a: a[len(prefix):] for a in allocs if a.startswith(prefix) and a not in PEERS and a != "none"}
    plain = [a for a, n in names.items() if "-" not in n or n in also]
    arenas = [a for a, n in names.items() if n.endswith("-arenas")]
    return (plain, "the variants as they are"), (arenas, "behind stream arenas (`-arenas`)")


def section_serve(pg, bench):
    pg.add("", "## Serve: a multi-threaded server (bench `serve/<allocator>/<small|mixed>`)", "")
    modes = [m for m in ("small", "mixed") if bench.series("serve", m) or bench.failed.get(("serve", m))]
    if not modes:
        pg.add(f"{NOT_IN_RUN}: no `serve/` benchmark in "
               f"{'`bench.json`' if bench.path else 'this directory (no `bench.json`)'}.")
        return
    pg.add("Each host thread serves requests on its own stream (allocate keys and output and, on the "
           "GPU, CUB's sort storage; the device work checked on the device; stream-ordered frees). "
           "Requests/s are aggregate over all threads (`items_per_second`, "
           + ("from gpu-suite's serve part, `serve.json`: each allocator in its own processes, round by "
              "round; the median over the rounds of each round's median of the repetitions). "
              if any(bench.rounds("serve", m) for m in modes) else
              "median of the repetitions, every allocator's in one process). ")
           + "`x best peer`: the allocator's requests/s over the best of "
           f"{', '.join(PEERS)} at the same thread count; `x best of run`: over the best allocator "
           "of the run at that count.")
    for mode in modes:
        ips = bench.series("serve", mode)
        fails = bench.series("serve", mode, "failures")
        waits = bench.series("serve", mode, "stream_waits_per_1k_allocs")
        reserved = bench.series("serve", mode, "reserved_MiB")
        errs = bench.failed.get(("serve", mode), {})
        allocs = plot.alloc_order(set(ips) | set(errs))
        ts = sorted(set(threads_of(ips)) | {t for e in errs.values() for t in e})
        what = {"small": "256-8K keys per request, host-bound", "mixed": "1K-1M keys per request, GPU-bound"}[mode]
        pg.add("", f"### serve/{mode} ({what})", "")

        def cell(a, t, v, f=fmt):
            if t in errs.get(a, {}):
                return "error"
            return f(v)

        rows = [[a] + [cell(a, t, ips.get(a, {}).get(t) / 1e3 if ips.get(a, {}).get(t) else None) for t in ts]
                for a in allocs]
        pg.add("Requests/s (thousands):", "")
        pg.add(*table(["allocator"] + [f"{t} threads" for t in ts], rows))
        best_peer = {t: max((ips[p][t] for p in PEERS if t in ips.get(p, {})), default=None) for t in ts}
        # `none` is the ceiling (no allocator), not an allocator: not the best of the run.
        best_run = {t: max((ips[a][t] for a in ips if t in ips[a] and a != "none"), default=None) for t in ts}
        if any(best_peer.values()):
            rows = [[a] + [cell(a, t, ratio(ips.get(a, {}).get(t), best_peer[t])) for t in ts]
                    for a in allocs if a not in PEERS]
            pg.add("", "x best peer (requests/s over the best peer's at the same thread count):", "")
            pg.add(*table(["allocator"] + [f"{t} threads" for t in ts], rows))
        else:
            pg.add("", "x best peer: no peer measured in this run (peers run on the CUDA backend only).")
        by_round = bench.series_rounds("serve", mode)
        vs_best = {a: {t: ratio(ips.get(a, {}).get(t), best_run[t]) for t in ts} for a in allocs}
        round_text = {}
        if by_round:
            # Within each round first (the allocators of a round ran one after another), then the
            # median over the rounds: a round's host state is in both sides of its ratios.
            rounds = sorted({r for a in by_round for t in by_round[a] for r in by_round[a][t]})
            for t in ts:
                for r in rounds:
                    best = max((by_round[a][t][r] for a in by_round if a != "none" and r in by_round[a].get(t, {})),
                               default=None)
                    for a in by_round:
                        v = by_round[a].get(t, {}).get(r)
                        if best and v:
                            round_text.setdefault(a, {}).setdefault(t, []).append(v / best)
            for a, per_t in round_text.items():
                for t, rs in per_t.items():
                    vs_best[a][t] = statistics.median(rs)

        def best_cell(a, t):
            c = cell(a, t, vs_best.get(a, {}).get(t))
            rs = round_text.get(a, {}).get(t)
            return c if not rs or len(rs) < 2 or c == "error" else f"{c} ({', '.join(fmt(x) for x in rs)})"

        rows = [[a] + [best_cell(a, t) for t in ts] for a in allocs]
        pg.add("", "x best of run (requests/s over the best allocator's at the same thread count; `none`, "
               "the ceiling, is not an allocator and not counted as the best"
               + ("; with rounds: the median of each round's ratio, the rounds' in parentheses"
                  if any(len(rs) > 1 for per_t in round_text.values() for rs in per_t.values()) else "")
               + "):", "")
        pg.add(*table(["allocator"] + [f"{t} threads" for t in ts], rows))
        cvs = bench.series_cv("serve", mode)
        if bench.rounds("serve", mode) == 1:
            # merge_rounds.py's cv over one round is 0: no spread was measured, so none is shown.
            pg.add("", "One round: no spread between rounds to show (each point is one process's median of "
                   f"its {bench.repetitions('serve', mode) or '?'} repetitions).")
        elif cvs:
            # How far one repetition strays: a ratio of two medians above is only as sure as this.
            reps = bench.repetitions("serve", mode)
            n_rounds = bench.rounds("serve", mode)
            rows = [[a] + [cell(a, t, 100 * cvs[a][t] if t in cvs.get(a, {}) else None) for t in ts] for a in allocs]
            what = (f"the rounds' spread (cv of the {n_rounds} rounds' medians, %; {reps or '?'} repetitions "
                    f"per process)" if n_rounds else
                    f"the repetitions' spread (cv: their standard deviation over their mean, %; "
                    f"{reps or '?'} repetitions per point)")
            pg.add("", what[0].upper() + what[1:] + ":", "")
            pg.add(*table(["allocator"] + [f"{t} threads" for t in ts], rows))
        rows = []
        for a in allocs:
            rows.append([a] + [cell(a, t, fails.get(a, {}).get(t)) for t in ts]
                        + [cell(a, t, waits.get(a, {}).get(t)) for t in ts]
                        + [cell(a, t, reserved.get(a, {}).get(t)) for t in ts])
        pg.add("", "`failures`: results the device saw wrong (cuda: requests; sim: checks, two per request); "
               "`stream_waits_per_1k_allocs`: device-side waits of one stream on another per 1000 "
               "allocations (pools only; – for peers); `reserved_MiB`: the pool's reserved bytes at the end.", "")
        pg.add(*table(["allocator"] + [f"failures @{t}" for t in ts] + [f"waits/1k @{t}" for t in ts]
                      + [f"reserved MiB @{t}" for t in ts], rows))
        if errs:
            pg.add("", "Benchmarks that ended with an error (a cudapool variant whose results were wrong "
                   "ends its benchmark with an error):", "")
            for a in plot.alloc_order(errs):
                for t in sorted(errs[a]):
                    pg.add(f"- `serve/{a}/{mode}` at {t} threads: {errs[a][t]}")
        # The targets, as read from this run (pools: every allocator that is not a peer).
        # Option variants (`lockfree-chunks`) are reported, not held to the targets; tls-mr is tls
        # as a CCCL user reaches it.
        # The variants behind stream arenas (`<v>-arenas`, since s45) are checked as a group of their
        # own beside them.
        (pools, _), (arena_pools, arena_label) = pool_groups(allocs, also=("tls-mr",))
        groups = [(pools, "")] + ([(arena_pools, f"{arena_label}: ")] if arena_pools else [])
        checks = []
        if mode == "small" and any(best_peer.values()):
            at = [t for t in (16, 64) if best_peer.get(t)]
            for group, label in groups:
                worst = min(((ratio(ips.get(a, {}).get(t), best_peer[t]) or 0.0, a, t) for a in group for t in at),
                            default=None)
                if worst:
                    checks.append(f"{label}lowest x best peer at {' and '.join(map(str, at))} threads: "
                                  f"{fmt(worst[0])} ({worst[1]}, {worst[2]} threads; target >= 4)")
            # The ceiling: with no allocator at all a server reaches this multiple of the best peer,
            # so a target above it is above what any allocator can give on this host.
            ceiling = [f"{fmt(ratio(ips['none'][t], best_peer[t]))} at {t} threads" for t in at
                       if t in ips.get("none", {})]
            if ceiling:
                checks.append("the ceiling (`none`, no allocator) x best peer: " + ", ".join(ceiling))
        if mode == "mixed":
            for group, label in groups:
                worst = min(((vs_best.get(a, {}).get(t) or 0.0, a, t) for a in group for t in ts
                             if best_run.get(t)), default=None)
                if worst:
                    checks.append(f"{label}lowest x best of run: {fmt(worst[0])} ({worst[1]}, {worst[2]} threads; "
                                  "target >= 0.98)")
            ceiling = [f"{fmt(ratio(best_run[t], ips['none'][t]))} at {t} threads" for t in ts
                       if best_run.get(t) and t in ips.get("none", {})]
            if ceiling:
                checks.append("the best allocator x the ceiling (`none`, no allocator): " + ", ".join(ceiling))
            n_rounds = bench.rounds("serve", mode)
            cvs = bench.series_cv("serve", mode)
            if n_rounds and n_rounds > 1 and len(pools) > 1:
                # The measure's own floor: equal allocators with the spread this run measured.
                floor = []
                for t in ts:
                    spread = [cvs[a][t] for a in pools if t in cvs.get(a, {})]
                    if spread:
                        cv = statistics.median(spread)
                        score, share = equal_allocators_score(len(pools), n_rounds, cv)
                        floor.append(f"{fmt(score)} at {t} threads (cv {fmt(100 * cv)}%, >= 0.98 in "
                                     f"{fmt(100 * share)}% of trials)")
                if floor:
                    checks.append(f"{len(pools)} equal allocators with this run's median round spread would "
                                  f"score (simulated, {n_rounds} rounds): " + ", ".join(floor))
        pool_fail = sum(v for a in pools + arena_pools for v in fails.get(a, {}).values())
        pool_err = sum(len(errs.get(a, {})) for a in pools + arena_pools)
        checks.append(f"failures of the pools: {fmt(pool_fail)}" + (f", plus {pool_err} benchmarks ended with an error"
                                                                    if pool_err else "") + " (target 0)")
        peer_fail = {p: sum(fails[p].values()) for p in PEERS if p in fails}
        if peer_fail:
            checks.append("failures of the peers: " + ", ".join(f"{p} {fmt(v)}" for p, v in peer_fail.items()))
        pg.add("", f"serve/{mode} in this run: " + "; ".join(checks) + ".")
        by_alloc = {a: v for a, v in ips.items()}
        for p in plot.plot_threads(pg.plots_dir, bench.context, "serve", mode, by_alloc, set()):
            pg.image(p, os.path.basename(p))


def section_torch(pg):
    pg.add("", "## PyTorch workloads (`workloads.py`, one process per allocator)", "")
    path = pg.src("workloads.json")
    data = read_json(path) if path else None
    if not data or not data.get("rows"):
        pg.add(f"{NOT_IN_RUN}: no `workloads.json` (gpu-suite `torch` part).")
    else:
        pg.used.append(path)
        rows = data["rows"]
        runs = data.get("runs", {})
        any_run = next(iter(runs.values()), {}) if isinstance(runs, dict) else {}
        cfg = any_run.get("config", {})
        pg.add(f"From {pg.link(path)}: device {any_run.get('device', '?')}, torch {any_run.get('torch', '?')} "
               f"(CUDA {any_run.get('cuda', '?')}), {cfg.get('steps', '?')} steps per workload after "
               f"{cfg.get('warmup', '?')} warm-up, workloads in order "
               f"{', '.join(cfg.get('workloads', [])) or '?'} in one process per allocator. Step time: the median "
               "over the steps; memory: device memory in use by the process after the workload minus its "
               "baseline (the process keeps what it reserved, so later workloads include earlier peaks). "
               "`x torch` / `x expandable`: against PyTorch's own allocator without / with "
               "`expandable_segments:True` on the same workload. `process MiB`: the process's device memory in "
               "all (`mem_get_info`, context and cuBLAS included), the memory target's measure; `x expandable "
               "(process)` compares it with expandable segments' process (median of the rounds' ratios). With several rounds (the allocators' "
               "processes alternating, round by round) the figures are medians over the rounds, and "
               "`x torch` is the median of each round's ratio to PyTorch's allocator in the same round, "
               "the rounds' ratios in parentheses.")
        for n in data.get("notes", []):
            pg.add(f"- note from the run: {n}")
        workloads = list(dict.fromkeys(r["workload"] for r in rows))
        allocs = list(dict.fromkeys(r["allocator"] for r in rows))
        get = {(r["workload"], r["allocator"]): r for r in rows}
        # The process in all (mem_get_info, context included): the memory target's measure. Rows of
        # workloads.py before s28 lack it: then round 1's process, from the run it kept per allocator.
        round1 = False

        def process_mib(w, a):
            nonlocal round1
            r = get.get((w, a), {})
            if r.get("used_mib") is not None:
                return r["used_mib"]
            used = ((runs.get(a) or {}).get("workloads", {}).get(w) or {}).get("used_bytes") if isinstance(runs, dict) else None
            if used is None:
                return None
            round1 = True
            return used / (1 << 20)

        # workloads.py since s37: the ratio on the steps both processes spent waiting for the device
        # (host_ms), where a host-bound step's time is the process's level, not the allocator's.
        bound = any(r.get("device_bound_vs_torch") is not None for r in rows)
        if bound:
            pg.add("", "`x torch, device-bound steps`: the median over the steps that both processes spent waiting "
                   "for the device (the host's time to the step's return at most 0.8 of the step) of the step's "
                   "time over PyTorch's allocator's at the same step (the same seed, the same shapes); with "
                   "rounds the median of the rounds', and the steps counted over the rounds. A host-bound step "
                   "takes the host's launch time, which is the process's level whatever the allocator "
                   "(docs/results/2026-12-06-h100-s37).")
        measured = {}  # (workload, allocator) -> (process x expandable, x torch, x torch device-bound)
        for w in workloads:
            t = get.get((w, "torch"), {})
            e = get.get((w, "torch-expandable"), {})
            out = []
            for a in allocs:
                r = get.get((w, a))
                if not r:
                    continue
                ms, mib = r.get("median_step_ms"), r.get("used_over_baseline_mib")
                # Rounds (gpu-suite TORCH_ROUNDS): the median of each round's ratio, with the rounds'.
                vs_torch = r.get("median_vs_torch", ratio(ms, t.get("median_step_ms")))
                by_round = r.get("vs_torch_by_round") or []
                x_torch = fmt(vs_torch) + (f" ({', '.join(fmt(x) for x in by_round)})" if len(by_round) > 1 else "")
                proc = process_mib(w, a)
                x_proc = r.get("process_vs_torch_expandable")  # the median of the rounds' ratios
                if x_proc is None:
                    x_proc = ratio(proc, process_mib(w, "torch-expandable"))
                measured[(w, a)] = (x_proc, vs_torch, r.get("device_bound_vs_torch"))
                x_bound = fmt(r.get("device_bound_vs_torch")) + (
                    f" ({sum(r.get('device_bound_steps_by_round') or [])} steps)" if r.get("device_bound_vs_torch") is not None else "")
                out.append([a, fmt(ms), x_torch] + ([x_bound] if bound else []) + [fmt(ratio(ms, e.get("median_step_ms"))),
                            fmt(r.get("p90_step_ms")), fmt(mib), fmt(ratio(mib, t.get("used_over_baseline_mib"))),
                            fmt(ratio(mib, e.get("used_over_baseline_mib"))), fmt(proc), fmt(x_proc, 4),
                            fmt(r.get("peak_used_over_baseline_mib")),
                            {True: "yes", False: "**no**"}.get(r.get("values_match_torch"), "–")])
            pg.add("", f"### {w}", "")
            pg.add(*table(["allocator", "median step ms", "x torch"] + (["x torch, device-bound steps"] if bound else []) +
                          ["x expandable", "p90 ms", "MiB over baseline",
                           "x torch", "x expandable", "process MiB", "x expandable (process)", "peak MiB",
                           "losses/checksums = torch"], out))
        torch_targets(pg, workloads, allocs, measured)
        if round1:
            pg.add("", "Process MiB: round 1's processes (this workloads.json has no per-round process totals).")
        for p in torch_plots(pg, workloads, allocs, get):
            pg.image(p, os.path.basename(p))
    # train_compare.py: torch.json (the library's default variant), torch_<variant>.json.
    files = sorted(glob.glob(os.path.join(pg.run_dir, "torch.json")) + glob.glob(os.path.join(pg.run_dir, "torch_*.json")))
    pg.add("", "### train_compare.py (one training loop, losses compared bitwise)", "")
    out, several = [], False
    for f in files:
        d = read_json(f)
        if not isinstance(d, dict) or "verdict" not in d:
            continue
        pg.used.append(f)
        cp = d.get("runs", {}).get("cudapool", {})
        tr = d.get("runs", {}).get("torch", {})
        # Several pairs (gpu-suite's TORCH_TRAIN_PAIRS, alternating order): the median of their
        # ratios, each pair's in parentheses; the step times are the first pair's.
        ratios = d.get("pair_ratios") or []
        several = several or len(ratios) > 1
        each = f" ({', '.join(fmt(r) for r in ratios)})" if len(ratios) > 1 else ""
        out.append([pg.link(f), cp.get("cudapool_variant") or "(default)", d.get("verdict", "?"),
                    fmt(tr.get("median_step_ms")), fmt(cp.get("median_step_ms")), fmt(d.get("median_ratio")) + each,
                    "; ".join(d.get("problems") or []) or "none"])
    if out:
        if several:
            pg.add("Pairs of processes in alternating order (torch first, then last): `x torch` is the median "
                   "of the pairs' step-time ratios, each pair's in parentheses; the median ms are the first "
                   "pair's.", "")
        pg.add(*table(["file", "variant", "verdict", "torch median ms", "cudapool median ms", "x torch", "problems"], out))
    else:
        pg.add(f"{NOT_IN_RUN}: no `torch.json` / `torch_<variant>.json`.")


# Issue 14's PyTorch targets: after each workload the process holds no more than with expandable
# segments, and the median step is within 2% of PyTorch's own allocator.
TARGET_STEP = 1.02


def torch_targets(pg, workloads, allocs, measured):
    """One line per group of the plug-in's rows (`cudapool-<v>`, and `cudapool-<v>-arenas`): how many
    (workload, allocator) cells meet each PyTorch target, and the worst of each."""
    groups = pool_groups(allocs, prefix="cudapool-")
    lines = []
    for group, label in groups:
        cells = [(w, a) for w in workloads for a in group if (w, a) in measured]
        if not cells:
            continue
        parts = []
        mem = [c for c in cells if measured[c][0] is not None]
        if mem:
            high = max(mem, key=lambda c: measured[c][0])
            parts.append(f"memory at most expandable segments' in {sum(1 for c in mem if measured[c][0] <= 1.0)} of "
                         f"{len(mem)} cells (the highest {fmt(measured[high][0], 4)}x, {high[1]} after {high[0]})")
        for k, what in ((1, "median step"), (2, "device-bound steps")):
            have = [c for c in cells if measured[c][k] is not None]
            if not have:
                continue
            slow = max(have, key=lambda c: measured[c][k])
            parts.append(f"{what} within {round(100 * (TARGET_STEP - 1))}% of PyTorch's allocator in "
                         f"{sum(1 for c in have if measured[c][k] <= TARGET_STEP)} of {len(have)} "
                         f"(the slowest {fmt(measured[slow][k])}x, {slow[1]} on {slow[0]})")
        lines.append(f"{label}: " + "; ".join(parts))
    if lines:
        pg.add("", "Issue 14's PyTorch targets in this run (the process's memory after each workload no more than "
               f"with expandable segments, the step within {round(100 * (TARGET_STEP - 1))}% of PyTorch's own "
               "allocator): " + "; ".join(lines) + ".")


def grouped_bars(path, groups, series, values, ylabel, title, ref_line=None):
    """values: (group, series) -> value. Writes a grouped bar chart; returns path or None."""
    if not any(v is not None for v in values.values()):
        return None
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 + 0.35 * len(groups) * len(series)), 4.8))
    for i, s in enumerate(series):
        xs, ys = [], []
        for j, g in enumerate(groups):
            v = values.get((g, s))
            if v is not None:
                xs.append(j + (i - (len(series) - 1) / 2) * width)
                ys.append(v)
        if xs:
            ax.bar(xs, ys, width=width, label=s, hatch="//" if not s.startswith("cudapool") else None)
    if ref_line is not None:
        ax.axhline(ref_line, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=min(5, len(series)), loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def torch_plots(pg, workloads, allocs, get):
    written = []
    step = {}
    mem = {}
    for w in workloads:
        t = get.get((w, "torch"), {})
        for a in allocs:
            r = get.get((w, a))
            if r:
                step[(w, a)] = r.get("median_vs_torch", ratio(r.get("median_step_ms"), t.get("median_step_ms")))
                mem[(w, a)] = r.get("used_over_baseline_mib")
    p = grouped_bars(os.path.join(pg.plots_dir, "torch_step_time.png"), workloads, allocs, step,
                     "median step time / PyTorch's allocator's", "PyTorch workloads: step time", 1.0)
    if p:
        written.append(p)
    p = grouped_bars(os.path.join(pg.plots_dir, "torch_memory.png"), workloads, allocs, mem,
                     "device MiB in use over baseline, after the workload", "PyTorch workloads: process memory")
    if p:
        written.append(p)
    return written


def section_replay(pg, bench, rb):
    """rb: where the replays are (gpu-suite's replay part, replay.json, or bench); bench: limit/."""
    pg.add("", "## Replay of recorded traces (bench `replay/<allocator>/<trace>[/elided|/immediate]`)", "")
    params = rb.workload("replay")
    if not params:
        pg.add(f"{NOT_IN_RUN}: no `replay/` benchmark in "
               f"{'`bench.json`' if bench.path else 'this directory (no `bench.json`)'}.")
        return
    n_rounds = next((rb.rounds("replay", p) for p in params if rb.rounds("replay", p)), None)
    traces = sorted({replay_trace(p) for p in params})
    rows = {}  # (trace, alloc) -> [ordered Row, immediate Row, elided Row]
    for p, allocs in params.items():
        tr, k = replay_trace(p), 1 if p.endswith("/immediate") else 2 if p.endswith("/elided") else 0
        for a, ts in allocs.items():
            r = ts.get(1) or next(iter(ts.values()))
            cur = rows.setdefault((tr, a), [None, None, None])
            cur[k] = r
    allocs = plot.alloc_order({a for (_, a) in rows})

    def ns(r):
        ips = r.get("items_per_second") if r else None
        return 1e9 / ips if ips else None

    pg.add("One thread replays each trace's allocations and frees (frees stream-ordered on the trace's stream, "
           "as recorded; `/immediate`: immediate frees, pools only). "
           + (f"From gpu-suite's replay part, `replay.json`: each allocator in its own processes, "
              + (f"{n_rounds} rounds, the order rotating; per point the median over the rounds of each round's median "
                 "of the repetitions. " if n_rounds > 1 else "one round: per point the median of the repetitions. ")
              if n_rounds else "Medians of the repetitions, every allocator's in one process. ")
           + f"`x {BASELINE}`: its ns per operation over the allocator's, both stream-ordered (> 1: faster"
           + ("; with rounds: the median of each round's ratio, the rounds' in parentheses" if n_rounds else "")
           + "). "
           "reserved/live: peak bytes reserved from the device over peak bytes live in the trace "
           "(– where the allocator cannot tell).")
    live = {}
    for (tr, a), (o, i, _) in rows.items():
        v = (o or i).get("peak_live_MiB")
        if v is not None:
            live[tr] = v
    if live:
        pg.add("", "Peak live MiB per trace: " + ", ".join(f"{t} {fmt(live[t])}" for t in traces if t in live) + ".")
    head = ["allocator"] + traces

    def grid(f):
        return [[a] + [f(rows.get((t, a), [None, None, None])) for t in traces] for a in allocs
                if any(rows.get((t, a)) for t in traces)]

    pg.add("", "### ns per operation: stream-ordered (immediate)", "")
    pg.add(*table(head, grid(lambda oi: fmt(ns(oi[0])) + (f" ({fmt(ns(oi[1]))})" if oi[1] else ""))))
    if n_rounds == 1:
        pg.add("", "One round: no spread between rounds to show (each point is one process's median of its "
               "repetitions).")
    elif n_rounds:
        pg.add("", f"The rounds' spread, stream-ordered (cv of the {n_rounds} rounds' medians, %):", "")
        pg.add(*table(head, grid(lambda oi: fmt(100 * oi[0].cv["items_per_second"])
                                 if oi[0] and "items_per_second" in oi[0].cv else "–")))
    if any(oi[0] and oi[2] for oi in rows.values()):
        pg.add("", "### The device's event calls in place: stream-ordered minus elided", "",
               "`/elided`: the same stream-ordered replay with the pool's event records, queries and waits answered "
               "at once without the device (every event complete, as the device leaves them with nothing running; "
               "the same memory, `replay_memory_test`). Per cell: ns per operation elided (the pool's host work "
               "alone), and in parentheses stream-ordered minus elided: what the device's event calls cost per "
               "operation where the replay makes them, caches and all.", "")

        def el(oi):
            o, e = ns(oi[0]), ns(oi[2])
            if e is None:
                return "–"
            return fmt(e) + (f" ({fmt(o - e)})" if o is not None else "")
        pg.add(*table(head, [r for r in grid(el) if any(c != "–" for c in r[1:])]))
    def ordered_cells(key, intro, cell):
        """A table of cell(row) per allocator and trace, stream-ordered, where the replay reported `key`."""
        if not any(oi[0] and oi[0].get(key) is not None for oi in rows.values()):
            return
        pg.add("", intro, "")

        def one(oi):
            r = oi[0]
            return cell(r) if r and r.get(key) is not None else "–"
        pg.add(*table(head, [r for r in grid(one) if any(c != "–" for c in r[1:])]))

    epoch = bench.series("limit", "").get("epoch_event", {})  # items per second
    epoch_ns = 1e9 / epoch[1] if epoch.get(1) else None
    if epoch_ns and any(oi[0] and oi[0].get("events_per_op") is not None for oi in rows.values()):
        pg.add("", "### The epochs' share (stream-ordered)", "",
               f"`limit/epoch_event`: one epoch (an event recorded on a stream and, later, one query of it) "
               f"costs {fmt(epoch_ns)} ns on this host. Per cell: events recorded / queries made (events and "
               "streams) per 1000 operations, from the pool's device calls (a counting backend), and in parentheses "
               "what the events cost per operation (ns): the floor of the stream-ordered frees above the immediate "
               "figure.", "")

        def ep(oi):
            r = oi[0] if oi[0] else None
            e = None
            if r:
                e = r.get("device_records_per_op")
                e = r.get("events_per_op") if e is None else e
            q = r.get("device_queries_per_op") if r else None
            if e is None:
                return "–"
            return f"{fmt(1000 * e)} / {fmt(1000 * q) if q is not None else '–'} ({fmt(e * epoch_ns)})"
        pg.add(*table(head, [r for r in grid(ep) if any(c != "–" for c in r[1:])]))
        why = ("full", "bytes", "slow_path", "other")
        ordered_cells("closed_full_per_1k_ops",
                      "Why the epochs closed, per 1000 operations (`stats().epochs_closed_*`): full (`epoch_batch` "
                      "frees) / bytes (large frees reached a sixteenth of the mapped bytes) / slow path (a miss, or a "
                      "wait, closed every open epoch) / other (flushes, donations):",
                      lambda r: " / ".join(fmt(r.get(f"closed_{w}_per_1k_ops")) for w in why))
    ordered_cells("device_query_ns_per_call",
                  "The same calls timed where the pool makes them (bench's counting backend, since s32): ns "
                  "inside one event record / one event query, per call, stream-ordered. Against "
                  "`limit/epoch_event`, which makes the two back to back, this shows what the calls cost "
                  "amid the pool's own work (s32: an unsynchronized `cudaMemset` made every call 3-5x dearer).",
                  lambda r: f"{fmt(r.get('device_record_ns_per_call')) if r.get('device_record_ns_per_call') is not None else '–'}"
                            f" / {fmt(r.get('device_query_ns_per_call'))}")
    base = {t: ns(rows.get((t, BASELINE), [None, None, None])[0]) for t in traces}
    # Per trace, allocator -> round -> items/s (replay runs on one thread).
    by_round = {t: {al: ts.get(1) or next(iter(ts.values()), {}) for al, ts in rb.series_rounds("replay", t).items()}
                for t in traces}

    def x_base(t, a):
        """(ratio, the rounds' ratios): the allocator's speed over the baseline's on trace t, within
        each round first (its ns over cudaMallocAsync's of the same round), then the median over the
        rounds; without rounds the ratio of the medians."""
        mine, theirs = by_round[t].get(a, {}), by_round[t].get(BASELINE, {})
        rs = [mine[r] / theirs[r] for r in sorted(mine) if theirs.get(r) and mine[r]]
        if rs and a != BASELINE:
            return statistics.median(rs), rs
        return ratio(base[t], ns(rows.get((t, a), [None, None, None])[0])), []

    pg.add("", f"### x {BASELINE} (stream-ordered)", "")
    if any(base.values()):
        out = []
        for a in allocs:
            cells = []
            for t in traces:
                v, rs = x_base(t, a)
                cells.append(f"{fmt(v)} ({', '.join(fmt(x) for x in rs)})" if rs else fmt(v))
            out.append([a] + cells)
        pg.add(*table(head, out))
    else:
        pg.add(f"{NOT_IN_RUN}: {BASELINE} was not measured (CUDA backend only).")
    pg.add("", "### peak reserved / peak live (stream-ordered; immediate in parentheses where it differs)", "")

    def rl(oi):
        o = oi[0].get("reserved_over_live") if oi[0] else None
        i = oi[1].get("reserved_over_live") if oi[1] else None
        s = fmt(o)
        if i is not None and (o is None or abs(i - o) > 5e-4):
            s += f" ({fmt(i)})"
        return s

    out = grid(rl)
    # The ideal non-moving best fit of each trace (bench/fit_floor.hpp), the same for every
    # allocator that replayed the whole trace: what a heap whose blocks never move can reach.
    floors = []
    for t in traces:
        f = next((oi[k].get("floor_over_live") for (tt, _), oi in rows.items() if tt == t
                  for k in (0, 1) if oi[k] and oi[k].get("floor_over_live")), None)
        floors.append(fmt(f) if f else "–")
    if any(f != "–" for f in floors):
        out.append(["best-fit floor (`floor_over_live`)"] + floors)
    pg.add(*table(head, out))
    replay_targets(pg, traces, allocs, rows, live, ns, x_base if any(base.values()) else None)
    for p in plot.plot_replay(pg.plots_dir, rb.context or bench.context, replay_rows(params), set()):
        pg.image(p, os.path.basename(p))


# Issue 14's replay targets: per operation at most this many ns and at least this many times faster
# than the baseline, and peak reserved over peak live at most this on every trace whose live peak is
# at least TARGET_LIVE_MIB (below it one slab per size class dominates).
TARGET_NS, TARGET_X, TARGET_RL, TARGET_LIVE_MIB = 80, 10, 1.10, 64


def replay_targets(pg, traces, allocs, rows, live, ns, x_base):
    """One line per group of pools (the variants as they are; behind stream arenas, `-arenas`): how
    many (allocator, trace) cells meet each of issue 14's replay targets, the worst of each, and the
    traces on which every pool of the group meets all three. x_base: None without the baseline."""
    groups = pool_groups(allocs)
    lines = []
    for group, label in groups:
        cells = [(a, t) for a in group for t in traces if rows.get((t, a)) and rows[(t, a)][0]]
        if not cells:
            continue
        t_ns = {c: ns(rows[(c[1], c[0])][0]) for c in cells}
        t_x = {c: x_base(c[1], c[0])[0] for c in cells} if x_base else {}
        t_rl = {c: rows[(c[1], c[0])][0].get("reserved_over_live") for c in cells}
        big = [c for c in cells if live.get(c[1], 0) >= TARGET_LIVE_MIB]

        def meets(c):
            return (t_ns[c] is not None and t_ns[c] <= TARGET_NS
                    and (not x_base or (t_x.get(c) or 0) >= TARGET_X)
                    and (c not in big or (t_rl[c] is not None and t_rl[c] <= TARGET_RL)))

        parts = []
        worst = max(cells, key=lambda c: t_ns[c] or 0)
        parts.append(f"<= {TARGET_NS} ns in {sum(1 for c in cells if (t_ns[c] or 1e18) <= TARGET_NS)} of "
                     f"{len(cells)} cells (the slowest {fmt(t_ns[worst])} ns, {worst[0]} on {worst[1]})")
        if x_base:
            low = min(cells, key=lambda c: t_x[c] or 0)
            parts.append(f">= {TARGET_X}x {BASELINE} in {sum(1 for c in cells if (t_x[c] or 0) >= TARGET_X)} "
                         f"(the lowest {fmt(t_x[low])}x, {low[0]} on {low[1]})")
        if big:
            high = max(big, key=lambda c: t_rl[c] or 0)
            parts.append(f"reserved/live <= {fmt(TARGET_RL)} in {sum(1 for c in big if (t_rl[c] or 1e18) <= TARGET_RL)} "
                         f"of the {len(big)} cells of traces live at {TARGET_LIVE_MIB} MiB or more "
                         f"(the highest {fmt(t_rl[high])}, {high[0]} on {high[1]})")
        every = [t for t in traces if all(meets((a, t)) for a in group if (a, t) in t_ns)]
        parts.append("every target by every pool of the group on " + (", ".join(every) if every else "no trace"))
        lines.append(f"{label}: " + "; ".join(parts))
    if lines:
        pg.add("", f"Issue 14's replay targets in this run (<= {TARGET_NS} ns per operation, >= {TARGET_X}x "
               f"{BASELINE}, peak reserved <= {fmt(TARGET_RL)}x peak live where the live peak is at least "
               f"{TARGET_LIVE_MIB} MiB), stream-ordered: " + "; ".join(lines) + ".")


def replay_rows(params):
    """plot.plot_replay's input: trace param -> alloc -> Row (the elided replays are in a table only)."""
    return {p: {a: (ts.get(1) or next(iter(ts.values()))) for a, ts in allocs.items()} for p, allocs in params.items()
            if not p.endswith("/elided")}


def replay_trace(param):
    """The trace of a replay param: without its /immediate or /elided."""
    for suffix in ("/immediate", "/elided"):
        if param.endswith(suffix):
            return param[:-len(suffix)]
    return param


def scaling_table(pg, series, what, extra_ns=False):
    ts = threads_of(series)
    base = series.get(BASELINE, {})
    head = ["allocator"] + [f"{t}" for t in ts]
    if extra_ns and 1 in ts:
        head.append("ns/pair @1")
    t_cmp = 16 if 16 in ts else (ts[-1] if ts else None)
    if base and t_cmp:
        head.append(f"x {BASELINE} @{t_cmp}")
    rows = []
    for a in plot.alloc_order(series):
        v = series[a]
        r = [a] + [fmt(v[t] / 1e6) if t in v else "–" for t in ts]
        if extra_ns and 1 in ts:
            r.append(fmt(1e9 / v[1]) if v.get(1) else "–")
        if base and t_cmp:
            r.append(fmt(ratio(v.get(t_cmp), base.get(t_cmp))))
        rows.append(r)
    pg.add(f"{what}, M/s aggregate over all threads, by host threads (median of the repetitions):", "")
    pg.add(*table(head, rows))


def section_scaling(pg, bench):
    pg.add("", "## Microbenchmarks: pair scaling and producer -> consumer", "")
    pairs = bench.workload("pair")
    if not pairs:
        pg.add(f"{NOT_IN_RUN}: no `pair/` benchmark in "
               f"{'`bench.json`' if bench.path else 'this directory (no `bench.json`)'}.")
    for param in sorted(pairs, key=lambda p: int(p) if p.isdigit() else 0):
        s = bench.series("pair", param)
        pg.add("", f"### pair/{param} (allocate + free of {param} bytes on each thread)", "")
        scaling_table(pg, s, "alloc+free pairs", extra_ns=True)
        for p in plot.plot_threads(pg.plots_dir, bench.context, "pair", param, s, set()):
            pg.image(p, os.path.basename(p))
    pg.add("", "### prodcons (4 KiB blocks allocated by producers, freed by consumers; threads in pairs)", "")
    s = bench.series("prodcons", "")
    if not s:
        pg.add(f"{NOT_IN_RUN}: no `prodcons/` benchmark.")
    else:
        scaling_table(pg, s, "blocks allocated and freed")
        for p in plot.plot_threads(pg.plots_dir, bench.context, "prodcons", "", s, set()):
            pg.image(p, os.path.basename(p))
    other = sorted({(w, p) for (w, p) in bench.by if w not in ("pair", "prodcons", "serve", "replay")})
    pg.add("", "### Other microbenchmarks (plots only)", "")
    if not other:
        pg.add(f"{NOT_IN_RUN}: no other workload in `bench.json`.")
    for w, p in other:
        s = bench.series(w, p)
        paths = plot.plot_threads(pg.plots_dir, bench.context, w, p, s, set()) if s else []
        if paths:
            pg.add("", f"`{w}{'/' + p if p else ''}`: " + ", ".join(f"[{os.path.basename(x)}]({pg.rel(x)})" for x in paths))
    other_errs = [e for e in bench.errors if not e.startswith("serve/")]
    if other_errs:
        pg.add("", "Benchmarks that ended with an error:", "")
        pg.add(*[f"- `{e}`" for e in other_errs])


def section_spread(pg):
    pg.add("", "### Single-thread spread between processes (gpu-suite `spread`)", "")
    path = pg.src("spread.json")
    d = read_json(path) if path else None
    if not isinstance(d, dict) or not d.get("runs"):
        pg.add(f"{NOT_IN_RUN}: no `spread.json` (bench's fresh processes).")
        section_spread_instances(pg)  # the instances probe can be there without it (a part cut short)
        return
    pg.used.append(path)
    runs = d["runs"]
    pg.add("The same single-thread benchmarks in fresh processes: `free`, placed by the OS; `per CPU`, one "
           "process pinned (taskset) to each CPU of the host in turn; `pinned`, every process on one CPU. "
           f"Each process's figure is the median of {d.get('repetitions', 3)} repetitions"
           f"{' run in random order' if d.get('interleaved') else ''} (ns per alloc+free pair; `limit/stack` has "
           "no pool). `r with limit/stack`: the correlation over all processes of the benchmark's medians with "
           "`limit/stack`'s in the same process (near 1: the process's speed is the host's, not the pool's). "
           "Issue 15's target: five fresh processes within 10% of each other.", "")
    stack = next((n for r in runs for n in r["ns"] if n.startswith("limit/stack")), None)
    names = sorted({n for r in runs for n in r["ns"]}, key=lambda n: (n.startswith("limit"), n))
    rows = []
    for n in names:
        row = [f"`{n.replace('/real_time/threads:1', '')}`"]
        for kind in ("free", "cpu", "pinned"):
            v = [r["ns"][n] for r in runs if r["tag"].startswith(kind + "_") and n in r["ns"]]
            row.append(f"{fmt(min(v))}-{fmt(max(v))} ({fmt(max(v) / min(v))}x, {len(v)})" if v else "-")
        cpu = sorted((r["cpu"], r["ns"][n]) for r in runs if r["tag"].startswith("cpu_") and n in r["ns"])
        if cpu:
            lo = min(x for _, x in cpu)
            slow = [str(c) for c, x in cpu if x > 1.1 * lo]
            row.append(", ".join(slow) if slow else "none")
        else:
            row.append("-")
        pinned_cpu = next((r["cpu"] for r in runs if r["tag"].startswith("pinned_")), None)
        row.append("-" if pinned_cpu is None else str(pinned_cpu))
        pairs = [(r["ns"][n], r["ns"][stack]) for r in runs if stack and n != stack and n in r["ns"] and stack in r["ns"]]
        row.append(fmt(correlation(pairs)) if len(pairs) >= 3 else "-")
        rows.append(row)
    pg.add(*table(["benchmark", "free: min-max ns (max/min, processes)", "per CPU", "pinned",
                   "CPUs >10% above the fastest", "pinned CPU", "r with limit/stack"], rows))
    section_spread_instances(pg)


def section_spread_instances(pg):
    """The instances probe (bench/instances.cpp), where the run has it: no text at all otherwise."""
    path = pg.src("spread_instances.json")
    d = read_json(path) if path else None
    if not isinstance(d, dict) or not d.get("runs"):
        return
    pg.used.append(path)
    runs = {tag: r for tag, r in d["runs"].items() if r.get("mode") != "processes"}
    fresh = {tag: r for tag, r in d["runs"].items() if r.get("mode") == "processes"}
    variants = sorted({v for r in d["runs"].values() for v in r.get("variants", {})})

    def rows_of(group):
        rows = []
        for v in variants:
            for tag in sorted(group):
                x = group[tag].get("variants", {}).get(v)
                if not x:
                    continue
                im, rm = x["instance_medians"], x["round_medians"]
                rows.append([f"`{v}`", tag, f"{fmt(min(im))}-{fmt(max(im))} ({fmt(max(im) / min(im))}x)",
                             f"{fmt(max(rm) / min(rm))}x",
                             f"{100 * x['instance_share']:.0f}% / {100 * x['round_share']:.0f}%",
                             f"{fmt(x['f_instances'])} / {fmt(x['f_rounds'])}"])
        return rows

    if runs:
        first = next(iter(runs.values()))
        pg.add("", f"Instance by instance (`instances`, spread_instances.json): {first.get('instances', '?')} pools of a "
               f"variant alive at once in one process, {first.get('rounds', '?')} interleaved rounds of "
               f"{first.get('pairs', '?')} pairs each, in processes pinned to one CPU and free. If placement decides, an "
               "instance keeps its speed from round to round (the instances explain the variance, F of the instances "
               "well above 1); if the host's state over time decides, the rounds do. Per process: the instances' "
               "medians max/min, the rounds' medians max/min, the share of the variance of log(ns) the instances / the "
               "rounds explain, and F of each.", "")
        pg.add(*table(["variant", "process", "instances' medians, ns (max/min)", "rounds' medians max/min",
                       "variance: instances / rounds", "F: instances / rounds"], rows_of(runs)))
    if fresh:
        first = next(iter(fresh.values()))
        within = [(v, tag) for v in variants for tag in fresh
                  if (x := fresh[tag].get("variants", {}).get(v))
                  and max(x["instance_medians"]) <= 1.1 * min(x["instance_medians"])]
        total = sum(1 for v in variants for tag in fresh if fresh[tag].get("variants", {}).get(v))
        pg.add("", f"Fresh processes (`instances --processes`, spread_instances.json): {first.get('instances', '?')} "
               "processes of each variant, each with its own pool, backend and address-space layout, all alive at "
               f"once and measured in the same {first.get('rounds', '?')} interleaved rounds of "
               f"{first.get('pairs', '?')} pairs, so that the host's state over time falls on the rounds and a "
               "process's median is its own (issue 15: five fresh processes of a variant within 10%). "
               + ("The columns as above, a process for an instance. " if runs else
                  "Per run: the processes' medians max/min, the rounds' medians max/min, the share of the variance of "
                  "log(ns) the processes / the rounds explain, and F of each (about 1 where the processes do not "
                  "differ). ")
               + f"Within 10%: {len(within)} of {total} groups.", "")
        pg.add(*table(["variant", "run", "processes' medians, ns (max/min)", "rounds' medians max/min",
                       "variance: processes / rounds", "F: processes / rounds"], rows_of(fresh)))


def correlation(pairs):
    """Pearson's r of (x, y) pairs; None where either side does not vary."""
    try:
        return statistics.correlation(*zip(*pairs))
    except statistics.StatisticsError:
        return None


def mib(b):
    return fmt(b / 2**20) if isinstance(b, (int, float)) else "–"


def stress_row(pg, path, d, peer):
    viol = d.get("violations")
    detail = f"{viol} (overlaps {d.get('overlaps', '?')}, mismatches {d.get('device_mismatches', '?')}, " \
             f"invalid frees {d.get('invalid_frees', '?')})"
    res = str(d.get("result", "?"))
    row = [pg.link(path), d.get("allocator") or "" if peer else d.get("variant", "?"),
           f"{d.get('threads', '?')} x {d.get('streams', '?')}", d.get("sizes", "?"), fmt(d.get("seconds")),
           fmt(d.get("ops")), fmt(d.get("ops_per_second")), f"**{detail}**" if viol else detail,
           f"**{res}**" if res != "pass" else res, mib(d.get("peak_live_bytes")), mib(d.get("peak_reserved_bytes"))]
    if peer:
        fv = d.get("first_violations") or []
        row.append(fv[0].replace("|", "/") if fv else "–")
        row.append(d.get("skipped_checks") or "–")
    else:
        st = d.get("pool_stats") or {}
        ev = d.get("pool_events_recorded")
        row += [fmt(d.get("handoffs")), fmt(d.get("cross_stream_frees")),
                fmt(ratio(d.get("frees"), ev)) if ev else "–", fmt(st.get("stream_waits"))]
    return row


def section_peers(pg):
    pg.add("", "## Peers under stress (`stress --allocator=<peer>`, gpu-suite `peers`)", "")
    files = sorted(glob.glob(os.path.join(pg.run_dir, "stress_peer_*.json")))
    rows = []
    for f in files:
        d = read_json(f)
        if isinstance(d, dict):
            pg.used.append(f)
            rows.append(stress_row(pg, f, d, peer=True))
    if not rows:
        pg.add(f"{NOT_IN_RUN}: no `stress_peer_<allocator>.json`.")
        return
    pg.add("The same threads x streams workload and device verification as the pools' soaks, over a peer "
           "allocator. A peer's violations are its result (stress exits 1), reported as measured.", "")
    pg.add(*table(["file", "allocator", "threads x streams", "sizes", "s", "ops", "ops/s", "violations", "result",
                   "peak live MiB", "peak reserved MiB", "first violation", "checks skipped"], rows))


def section_pools(pg):
    pg.add("", "## Pool stress, soaks and correctness", "")
    files = sorted(f for f in glob.glob(os.path.join(pg.run_dir, "stress_*.json"))
                   if not os.path.basename(f).startswith("stress_peer_"))
    rows = []
    for f in files:
        d = read_json(f)
        if isinstance(d, dict):
            pg.used.append(f)
            rows.append(stress_row(pg, f, d, peer=False))
    pg.add("### Soaks (`stress --backend=cuda`, the variants side by side, gpu-suite `soak`)", "")
    if rows:
        pg.add("`frees/event`: frees per event the pool recorded; `stream waits`: the pool's device-side waits "
               "of one stream on another (– where the run's stats do not have the field).", "")
        pg.add(*table(["file", "variant", "threads x streams", "sizes", "s", "ops", "ops/s", "violations", "result",
                       "peak live MiB", "peak reserved MiB", "hand-offs", "cross-stream frees", "frees/event",
                       "stream waits"], rows))
    else:
        pg.add(f"{NOT_IN_RUN}: no `stress_<variant>.json`.")
    for log in sorted(glob.glob(os.path.join(pg.run_dir, "soak*.log"))):
        exits = re.findall(r"^soak variant=(\S+) exit=(\d+)", read_text(log) or "", re.M)
        if exits:
            pg.used.append(log)
            pg.add("", f"{pg.link(log)}: " + ", ".join(f"{v} exit {e}" for v, e in exits) + ".")

    pg.add("", "### Tests on the CUDA backend (gpu-suite `tests`)", "")
    path = pg.src("tests.log")
    text = read_text(path) if path else None
    if not text:
        pg.add(f"{NOT_IN_RUN}: no `tests.log`.")
    else:
        pg.used.append(path)
        binaries = re.findall(r"^-- (\S+_test)$", text, re.M)
        passed = sum(int(n) for n in re.findall(r"^\[  PASSED  \] (\d+) tests?", text, re.M))
        skipped = sum(int(n) for n in re.findall(r"^\[  SKIPPED \] (\d+) tests?, listed below", text, re.M))
        failed_bins = re.findall(r"^\[  FAILED  \] (\d+) tests?, listed below", text, re.M)
        failed = sum(int(n) for n in failed_bins)
        pg.add(f"{pg.link(path)}: {len(binaries)} test binaries; {passed} tests passed, {skipped} skipped, "
               f"{'**' + str(failed) + ' failed**' if failed else '0 failed'}.")
    path = pg.src("faults.log")
    text = read_text(path) if path else None
    pg.add("", "### Injected faults (each run must exit 1)", "")
    faults = re.findall(r"^inject=(\S+) variant=(\S+) exit=(\d+)", text or "", re.M)
    if not faults:
        pg.add(f"{NOT_IN_RUN}: no `faults.log` with `inject=` lines.")
    else:
        pg.used.append(path)
        kinds = list(dict.fromkeys(k for k, _, _ in faults))
        variants = list(dict.fromkeys(v for _, v, _ in faults))
        ex = {(k, v): e for k, v, e in faults}
        pg.add(f"{pg.link(path)}, exit status per variant (1 = caught):", "")
        pg.add(*table(["variant"] + kinds, [[v] + [ex.get((k, v), "–") if ex.get((k, v)) in (None, "1")
                                                  else f"**{ex[(k, v)]}**" for k in kinds] for v in variants]))
    path = pg.src("sanitizer.log")
    text = read_text(path) if path else None
    pg.add("", "### compute-sanitizer (gpu-suite `sanitizer`)", "")
    if not text:
        pg.add(f"{NOT_IN_RUN}: no `sanitizer.log`.")
    else:
        pg.used.append(path)
        verdicts = re.findall(r"^(sanitizer: .*|pool sanitizer: FAIL.*|compute-sanitizer not found.*)$", text, re.M)
        pool = re.findall(r"^-- exit (\d+) \(want (\d+)\)$", text, re.M)
        ok = sum(1 for got, want in pool if got == want)
        pg.add(f"{pg.link(path)}: " + ("; ".join(verdicts) if verdicts else "no verdict line")
               + (f"; pool_sanitizer_demo: {ok} of {len(pool)} runs exited as required." if pool else "."))


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="one GPU-suite output directory")
    ap.add_argument("--date", help="date of the run (default: bench.json's context date)")
    ap.add_argument("--host", help="the host (default: bench.json's host name, CPUs, and the GPU workloads.json names)")
    ap.add_argument("--command", help="the command(s) that made the run (default: command.txt, else 'not recorded')")
    ap.add_argument("--note", default="", help="a line shown under the header")
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    ap.add_argument("--plots", help="directory for the plots (default: results/plots beside --out)")
    args = ap.parse_args()
    if not os.path.isdir(args.run_dir):
        ap.error(f"{args.run_dir} is not a directory")
    plots_dir = args.plots or os.path.join(os.path.dirname(os.path.abspath(args.out)), "results", "plots")
    os.makedirs(plots_dir, exist_ok=True)
    for old in glob.glob(os.path.join(plots_dir, "*.png")):
        os.remove(old)  # the plots of an earlier page
    pg = Page(args.run_dir, args.out, plots_dir)
    bench_path = pg.src("bench.json")
    bench = Bench(bench_path)
    if bench_path:
        pg.used.append(bench_path)

    ctx = bench.context
    wl = read_json(pg.src("workloads.json")) if pg.src("workloads.json") else None
    gpu = None
    if isinstance(wl, dict) and isinstance(wl.get("runs"), dict) and wl["runs"]:
        gpu = next(iter(wl["runs"].values())).get("device")
    date = args.date or ctx.get("date") or "not recorded"
    host = args.host or (", ".join(x for x in [ctx.get("host_name"), f"{ctx['num_cpus']} CPUs" if "num_cpus" in ctx else None,
                                               gpu] if x) or "not recorded")
    command = args.command
    if not command:
        ct = read_text(pg.src("command.txt")) if pg.src("command.txt") else None
        command = ct.strip() if ct else "not recorded"

    pg.add(f"# Results: the run of {date}", "",
           "<!-- Generated by docs/make_results.py; do not edit by hand: re-run it on a GPU-suite output directory. -->", "",
           f"- **Run:** {date}", f"- **Host:** {host}",
           f"- **Source:** [{os.path.normpath(args.run_dir)}/]({pg.rel(args.run_dir)}/) "
           f"(backend {ctx.get('cudapool_backend', '?')} in bench.json)" if bench_path else
           f"- **Source:** [{os.path.normpath(args.run_dir)}/]({pg.rel(args.run_dir)}/) (no bench.json)",
           "- **Command:**", "", "  ```", *["  " + c for c in command.splitlines()], "  ```")
    if args.note:
        pg.add("", f"> {args.note}")
    pg.add("", "Made with `/usr/bin/python3 docs/make_results.py RUN_DIR --date ... --host ... --command ...`; "
           "every figure below is read from the run directory's files. Earlier runs: "
           f"[results/archive/]({pg.rel(os.path.join(HERE, 'results', 'archive', 'README.md'))}).")
    header_end = len(pg.lines)

    serve_path = pg.src("serve.json")  # gpu-suite's serve part: each allocator in its own processes
    if serve_path:
        pg.used.append(serve_path)
    section_serve(pg, Bench(serve_path) if serve_path else bench)
    section_torch(pg)
    replay_path = pg.src("replay.json")  # gpu-suite's replay part: each allocator in its own processes
    if replay_path:
        pg.used.append(replay_path)
    section_replay(pg, bench, Bench(replay_path) if replay_path else bench)
    section_scaling(pg, bench)
    section_spread(pg)
    section_peers(pg)
    section_pools(pg)

    inputs = ", ".join(pg.link(p) for p in dict.fromkeys(pg.used)) or "none"
    used = {os.path.abspath(p) for p in pg.used}
    unread = sorted(os.path.relpath(os.path.join(d, f), args.run_dir)
                    for d, _, fs in os.walk(args.run_dir) for f in fs
                    if os.path.abspath(os.path.join(d, f)) not in used
                    and f.endswith((".json", ".log", ".txt", ".xml")))
    header = ["", f"Inputs read: {inputs}."]
    if unread:
        header += ["", "In the directory but not read by this page (other runs' extras, logs the tables "
                   "above summarise): " + ", ".join(f"`{u}`" for u in unread) + "."]
    pg.lines[header_end:header_end] = header
    with open(args.out, "w") as f:
        f.write("\n".join(pg.lines) + "\n")
    print(args.out)


if __name__ == "__main__":
    main()
