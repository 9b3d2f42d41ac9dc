#!/usr/bin/env python3
# diff.py A.out B.out OPS [regex]: per-op inclusive diff (B - A) of every function, via callgrind_annotate --inclusive=yes
import re, subprocess, sys
EV = None
def parse(f):
    global EV
    out = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100', f], capture_output=True, text=True).stdout
    d = {}
    for l in out.splitlines():
        if l.startswith('Events shown:'): EV = l.split(':',1)[1].split()
        l2 = re.sub(r'\(\s*[\d.]+%\)', '', l)
        toks = l2.split()
        if EV is None or len(toks) < len(EV)+1: continue
        nums = toks[:len(EV)]
        if not all(re.fullmatch(r'[\d,]+|\.', t) for t in nums): continue
        name = ' '.join(toks[len(EV):])
        v = [0 if t == '.' else int(t.replace(',', '')) for t in nums]
        if name in d: d[name] = [a+b for a,b in zip(d[name], v)]
        else: d[name] = v
    return d
a, b, ops = parse(sys.argv[1]), parse(sys.argv[2]), float(sys.argv[3])
rx = re.compile(sys.argv[4]) if len(sys.argv) > 4 else None
keys = ['Ir','Bcm','Bim','D1mr','D1mw','DLmr','DLmw']
idx = [EV.index(k) for k in keys]
rows = []
for n in b:
    va = a.get(n, [0]*len(EV)); vb = b[n]
    dd = [(vb[i]-va[i])/ops for i in idx]
    if rx and not rx.search(n): continue
    if abs(dd[0]) < 0.5: continue
    rows.append((dd, n))
rows.sort(key=lambda r: -r[0][0])
print('%9s %7s %7s %7s %7s %7s %7s  function' % tuple(keys))
for dd, n in rows:
    n = re.sub(r'\s*\[/.*\]$', '', n)
    n = n.replace('cudapool::', '').replace('std::', '')
    print('%9.1f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f  %s' % (*dd, n[:230]))
