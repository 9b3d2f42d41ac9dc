# Self cost per operation by function: the difference of two callgrind runs (--show Ir,Bcm) over the
# operations between them. Usage: ir_self.py RUN1.out RUN2.out OPS [TOP]
import subprocess, sys, re
def load(f):
    out = subprocess.run(['callgrind_annotate', '--show=Ir,Bcm', '--threshold=100', '--auto=no', f], capture_output=True, text=True).stdout
    d = {}; on = False
    for l in out.splitlines():
        if 'PROGRAM TOTALS' in l:
            t = re.match(r'\s*([\d,]+) \([^)]*\)\s+([\d,]+)', l)
            d['PROGRAM TOTALS'] = (int(t.group(1).replace(',', '')), int(t.group(2).replace(',', '')))
            continue
        if 'file:function' in l: on = True; continue
        if not on: continue
        m = re.match(r'\s*([\d,]+) \([^)]*\)\s+([\d,]+) \([^)]*\)\s+(.*)', l)
        if not m: continue
        name = re.sub(r' \[.*\]$', '', m.group(3)); name = name.split(':', 1)[1] if ':' in name else name
        name = re.sub(r'cudapool::(core::)?', '', name); name = re.sub(r'\(.*', '', name)[:90]
        v = (int(m.group(1).replace(',', '')), int(m.group(2).replace(',', '')))
        p = d.get(name, (0, 0)); d[name] = (p[0] + v[0], p[1] + v[1])
    return d
a, b, ops = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
rows = sorted(((n, (b[n][0] - a.get(n, (0, 0))[0]) / ops, (b[n][1] - a.get(n, (0, 0))[1]) / ops) for n in b), key=lambda r: -r[1])
tot = next(r for r in rows if r[0] == 'PROGRAM TOTALS')
print(f"program total {tot[1]:.1f} Ir/op {tot[2]:.2f} Bcm/op (Ir, Bcm per operation by function, self cost:)")
rows = [r for r in rows if r[0] != 'PROGRAM TOTALS']
for n, i, m in rows[:int(sys.argv[4])]: print(f"{i:7.1f} {m:5.2f}  {n}")
