import sys, json, re, collections
sys.argv_saved = sys.argv
sys.path.insert(0, '/work/wt-heap2/docs/results/2026-12-07-s48/sim_heap')
O = '/work/wt-heap2/build/cg'
OPS = {'mlp_4stream': 13652, 'lm_train': 48464}
def parse(path):
    selff = collections.Counter(); tot = None; names = {}; fn = None; pending = False
    for line in open(path):
        if line.startswith('fn='):
            m = re.match(r'fn=\((\d+)\)(?: (.*))?', line.rstrip('\n'))
            if m.group(2) is not None: names[m.group(1)] = m.group(2)
            fn = names[m.group(1)]; continue
        if line.startswith('cfn='):
            m = re.match(r'cfn=\((\d+)\)(?: (.*))?', line.rstrip('\n'))
            if m and m.group(2) is not None: names[m.group(1)] = m.group(2)
            pending = False; continue
        if line.startswith(('summary:', 'totals:')): tot = int(line.split()[1]); continue
        if line[0].isdigit() or line[0] in '+-*':
            t = line.split()
            if len(t) > 2 and not pending: selff[fn] += int(t[2])
            pending = False
            continue
        pending = line.startswith('calls=')
    return selff, tot
def counters(path):
    j = json.load(open(path))
    out = {}
    for b in j['benchmarks']:
        for k, v in b.items():
            if isinstance(v, (int, float)) and k not in ('real_time', 'cpu_time', 'items_per_second'):
                out[k] = v
    return out
tag = sys.argv[1]
HEAP = re.compile(r'segment_heap|core::merge_tags<|core::safe_for<')
for tr, ops in OPS.items():
    a = parse(f'{O}/{tag}.{tr}.1.out'); b = parse(f'{O}/{tag}.{tr}.3.out')
    heap = sum(b[0][k] for k in b[0] if HEAP.search(k or '')) - sum(a[0][k] for k in a[0] if HEAP.search(k or ''))
    print(f'{tag} {tr}: heap {heap/ops:.1f} Ir/op, program {(b[1]-a[1])/ops:.1f} Ir/op')
    for p in (1, 3):
        c = counters(f'{O}/{tag}.{tr}.{p}.json'); cb = counters(f'{O}/base.{tr}.{p}.json')
        print(f'  counters p{p} (reserved_over_live {c["reserved_over_live"]:.6f}, iterations {c["iterations"]}):', 'IDENTICAL to base' if c == cb else 'DIFFER ' + json.dumps({k: (cb.get(k), c.get(k)) for k in set(c) | set(cb) if c.get(k) != cb.get(k)}))
