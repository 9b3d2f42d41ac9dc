#!/usr/bin/env python3
"""Summary of GPU call V (run_v.sh): python3 summarize_v.py DIR."""
import collections, glob, json, os, re, statistics, sys

o = sys.argv[1]


def medians(path):
    try:
        return {x['run_name']: x for x in json.load(open(path))['benchmarks'] if x.get('aggregate_name') == 'median'}
    except Exception:
        return {}


def show_hot():
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in glob.glob(f'{o}/hot_*_pad*.json'):
        b = os.path.basename(path).split('_')[1]
        for n, x in medians(path).items():
            t[n][b].append(x['real_time'])
    if not t:
        return
    print('== hot paths over 8 stack placements (ns per item; median, min-max over placements), new/head')
    for n in sorted(t):
        h, w = t[n]['head'], t[n]['new']
        if h and w:
            print(f'{n:44s} head {statistics.median(h):7.2f} ({min(h):6.2f}-{max(h):6.2f})  new {statistics.median(w):7.2f} '
                  f'({min(w):6.2f}-{max(w):6.2f})  new/head {statistics.median(w) / statistics.median(h):.3f}  [{len(h)},{len(w)}]')


def show_fresh():
    for kind in ('fixed', 'random'):
        t = collections.defaultdict(list)
        for path in sorted(glob.glob(f'{o}/{kind}_*.json')):
            for n, x in medians(path).items():
                t[n].append(x['real_time'])
        if t:
            print(f'== five fresh processes, {kind} placement' + (' (setarch -R, one environment)' if kind == 'fixed' else ' (as a user runs them)'))
            for n in sorted(t):
                v = t[n]
                print(f'{n:44s} ' + ' '.join(f'{x:6.2f}' for x in v) + f'   max/min {max(v) / min(v):.3f}')


def show_serve():
    m = medians(f'{o}/serve.json')
    if not m:
        return
    print('== serve, req/s (median of 3, interleaved)')
    rate = {n: x.get('items_per_second', 0) for n, x in m.items()}
    for mode in ('small', 'mixed'):
        for th in (16, 64):
            names = {n.split('/')[1]: n for n in rate if f'/{mode}/' in n and n.endswith(f'threads:{th}')}
            if not names:
                continue
            peers = max(rate[names[p]] for p in ('cudaMallocAsync', 'cub') if p in names)
            best = max(rate[n] for a, n in names.items() if a != 'none')
            print(f'-- {mode}, {th} threads: best {best:.0f}, better peer {peers:.0f}')
            for a in sorted(names):
                x = m[names[a]]
                print(f'   {a:16s} {rate[names[a]]:10.0f}  x peer {rate[names[a]] / peers:5.2f}  x best {rate[names[a]] / best:5.3f}  '
                      f'failures {x.get("failures", 0):.0f} waits/1k {x.get("stream_waits_per_1k_allocs", 0):.3f} '
                      f'grows/1k {x.get("grows_per_1k_allocs", 0):.2f} maps/1k {x.get("maps_per_1k_allocs", 0):.2f} MiB {x.get("reserved_MiB", 0):.0f}')


def show_replay():
    m = medians(f'{o}/replay.json')
    if not m:
        return
    print('== replay, stream-ordered: ns/op (reserved/live); x = cudaMallocAsync ns / pool ns')
    traces = sorted({n.split('/')[2] for n in m})
    for tr in traces:
        cma = m.get(f'replay/cudaMallocAsync/{tr}/real_time')
        row = []
        for a in ('mutex', 'lockfree', 'tls', 'stream', 'cudaMallocAsync'):
            x = m.get(f'replay/{a}/{tr}/real_time')
            if x:
                ratio = f' x{cma["real_time"] / x["real_time"]:.1f}' if cma and a != 'cudaMallocAsync' else ''
                row.append(f'{a} {x["real_time"]:.1f} ({x.get("reserved_over_live", 0):.3f}){ratio}')
        floor = next((x.get('floor_over_live') for n, x in m.items() if f'/{tr}/' in n and x.get('floor_over_live')), None)
        print(f'{tr:22s} ' + '  '.join(row) + (f'  floor {floor:.3f}' if floor else ''))


def show_soak():
    for path in sorted(glob.glob(f'{o}/stress_*.json')):
        d = json.load(open(path)); p = d['pool_stats']
        print(f"== soak {os.path.basename(path)}: {d['seconds']:.0f} s, live {d['peak_live_bytes'] / 2**30:.2f} GiB, reserved "
              f"{d['peak_reserved_bytes'] / 2**30:.2f} GiB, grows {p['grows']}, events {p['events_recorded']}, waits {p['stream_waits']}, "
              f"violations {d['violations']}, result {d['result']}")


def show_torch():
    rows = {}
    for path in sorted(glob.glob(f'{o}/wl_*.json')):
        try:
            d = json.load(open(path))
        except Exception as e:
            print(path, e); continue
        rows[os.path.basename(path)[3:-5]] = d
    if not rows:
        return
    e = rows.get('torch-expandable'); t = rows.get('torch')
    print('== PyTorch: process device memory after each workload (MiB used, x torch-expandable) and median step (x torch)')
    for tag, d in rows.items():
        cells = []
        for w, v in d['workloads'].items():
            mem = v['used_bytes'] / 2**20
            xm = mem / (e['workloads'][w]['used_bytes'] / 2**20) if e else 0
            xs = v['median_step_ms'] / t['workloads'][w]['median_step_ms'] if t else 0
            cells.append(f'{w[:10]} {mem:.0f} ({xm:.4f}) {v["median_step_ms"]:.2f} ms ({xs:.3f})')
        print(f'{tag:26s} ' + '  '.join(cells))


show_hot(); show_fresh(); show_serve(); show_replay(); show_soak(); show_torch()
