#!/usr/bin/env python3
# table.py DIR TRACE OPS VARIANT... : per-op split from callgrind files DIR/<v>.<trace>.{1,3}.out
import re, subprocess, sys
sys.argv_saved = sys.argv
d, trace, ops = sys.argv[1], sys.argv[2], float(sys.argv[3])
P1, P2 = '1', '3'
def parse(f):
    out = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100', f], capture_output=True, text=True).stdout
    ev = None; res = {}
    for l in out.splitlines():
        if l.startswith('Events shown:'): ev = l.split(':',1)[1].split()
        l2 = re.sub(r'\(\s*[\d.]+%\)', '', l); t = l2.split()
        if ev is None or len(t) < len(ev)+1: continue
        if not all(re.fullmatch(r'[\d,]+|\.', x) for x in t[:len(ev)]): continue
        name = re.sub(r'\s*\[/.*\]$', '', ' '.join(t[len(ev):]))
        v = dict(zip(ev, [0 if x=='.' else int(x.replace(',','')) for x in t[:len(ev)]]))
        if name not in res: res[name] = v
    return res
K = ['Ir','Bcm','Bim','D1mr','D1mw','DLmr','DLmw']
def pick(r, rx):
    s = dict.fromkeys(K, 0)
    for n, v in r.items():
        if re.search(rx, n):
            for k in K: s[k] += v[k]
    return s
def sub(a, b): return {k: a[k]-b[k] for k in K}
def add(a, b): return {k: a[k]+b[k] for k in K}
print(f'### {trace}: per replayed operation ({int(ops)} ops = passes 3 - 1); Bm = Bcm+Bim mispredicts')
print('| variant | part | Ir | mispred | D1 miss (r+w) | LL miss (r+w) |')
print('|---|---|---:|---:|---:|---:|')
for v in sys.argv[4:]:
    r1, r2 = parse(f'{d}/{v}.{trace}.{P1}.out'), parse(f'{d}/{v}.{trace}.{P2}.out')
    def g(rx): return sub(pick(r2, rx), pick(r1, rx))
    tot = g(r'^PROGRAM TOTALS$')
    pm_a = g(r'pool_model<.*>::allocate\(unsigned long, (cudapool::)?stream_ref\)$')
    pm_d = g(r'pool_model<.*>::deallocate\(void\*, (cudapool::)?stream_ref\)$')
    bp_a = g(r'^\?\?\?:cudapool::basic_pool<[^>]*>::(allocate\(unsigned long, unsigned long, cudapool::stream_ref\)|allocate_impl\()')
    bp_d = g(r'^\?\?\?:cudapool::basic_pool<[^>]*>::deallocate\(void\*(, cudapool::stream_ref)?\)$')
    heap = add(g(r'segment_heap::allocate\('), g(r'segment_heap::free\('))
    arenas = 'arenas' in v
    if not arenas:  # basic_pool::allocate inlined into pool_model: count the whole pool_model as pool
        bp_a = pm_a
        if bp_d['Ir'] == 0: bp_d = pm_d
    bench = sub(sub(tot, pm_a), pm_d)
    front = sub(add(pm_a, pm_d), add(bp_a, bp_d))
    pool = add(bp_a, bp_d)
    rows = [('total', tot), ('(a) bench loop + any_pool call', bench), ('(b) front' if arenas else '(b) any_pool dispatch (dealloc only)', front),
            ('(c) pool alloc+free', pool), ('  of (c): alloc', bp_a), ('  of (c): free', bp_d), ('  of (c): segment_heap allocate+free', heap)]
    for name, x in rows:
        x = {k: x[k]/ops for k in K}
        print(f"| {v} | {name} | {x['Ir']:.1f} | {x['Bcm']+x['Bim']:.3f} | {x['D1mr']+x['D1mw']:.3f} | {x['DLmr']+x['DLmw']:.4f} |")
