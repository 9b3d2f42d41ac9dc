#!/usr/bin/env python3
# cgparse.py A.out B.out OPS [fnregex] : per-op (B - A)/OPS self Ir by function, by (file,line), and call counts.
import re, sys, collections
def parse(path):
    names = {'fl': {}, 'fn': {}, 'ob': {}}
    selfl = collections.Counter(); selff = collections.Counter(); incl_calls = collections.Counter(); calls = collections.Counter()
    selfins = collections.Counter()
    fl = fi = fn = None; pos = [0, 0]; pending_call = None; cfn = None
    def nm(kind, s):
        m = re.match(r'\((\d+)\)(?: (.*))?', s)
        if not m: return s
        if m.group(2) is not None: names[kind][m.group(1)] = m.group(2)
        return names[kind][m.group(1)]
    for line in open(path):
        line = line.rstrip('\n')
        if not line: continue
        if line.startswith('fl='): fl = fi = nm('fl', line[3:]); continue
        if line.startswith(('fi=', 'fe=')): fi = nm('fl', line[3:]); continue
        if line.startswith('fn='): fn = nm('fn', line[3:]); fi = fl; continue
        if line.startswith('cfn='): cfn = nm('fn', line[4:]); continue
        if line.startswith(('cfl=', 'cfi=')): nm('fl', line[4:]); continue
        if line.startswith(('ob=', 'cob=')): continue
        if line.startswith('calls='): pending_call = int(line[6:].split()[0]); continue
        if not (line[0].isdigit() or line[0] in '+-*'): continue
        t = line.split()
        for k in range(2):
            s = t[k]
            if s == '*': pass
            elif s[0] in '+-': pos[k] += int(s, 0) if not s[1:].startswith('0x') else (int(s[1:],16) * (1 if s[0]=='+' else -1))
            else: pos[k] = int(s, 0)
        c = int(t[2]) if len(t) > 2 else 0
        if pending_call is not None:
            calls[(fn, cfn)] += pending_call; incl_calls[cfn] += pending_call; pending_call = None
            continue
        selff[fn] += c; selfl[(fi, pos[1], fn)] += c; selfins[(fn, pos[0], fi, pos[1])] += c
    return selff, selfl, incl_calls, calls, selfins
a, b, ops = parse(sys.argv[1]), parse(sys.argv[2]), float(sys.argv[3])
rx = re.compile(sys.argv[4] if len(sys.argv) > 4 else 'segment_heap')
mode = sys.argv[5] if len(sys.argv) > 5 else 'fn'
def d(i): 
    r = collections.Counter(b[i]); r.subtract(a[i]); return r
if mode == 'fn':
    f = d(0); c = d(2)
    tot = sum(v for k, v in f.items() if rx.search(k or ''))
    print(f'self Ir per op, functions matching {rx.pattern}: total {tot/ops:.1f}')
    for k, v in sorted(f.items(), key=lambda x: -x[1]):
        if rx.search(k or '') and abs(v) > 0: print(f'{v/ops:9.2f}  calls/op {c.get(k,0)/ops:7.4f}  self/call {v/max(c.get(k,0),1):8.1f}  {k}')
elif mode == 'calls':
    c = d(3)
    for (f, cf), v in sorted(c.items(), key=lambda x: -x[1]):
        if rx.search(f or '') and v: print(f'{v/ops:8.4f}  {f}  ->  {cf}')
else:
    l = d(1)
    per = collections.Counter()
    for (fi, ln, fn), v in l.items():
        if rx.search(fn or ''): per[(fi, ln)] += v
    for (fi, ln), v in sorted(per.items(), key=lambda x: -x[1])[:int(mode)]:
        print(f'{v/ops:8.2f}  {fi.split("/")[-1]}:{ln}')
