# analyze.py DIAG_FILE [THRESHOLD_NS]: the diagnostic lines of instances with over 10^6 operations; for
# each pair of hot addresses, how many fast and slow instances (below / above the median, or
# THRESHOLD_NS) have them within 64 B of each other modulo 4 KiB (4K aliasing), and the low 12
# bits of each address among fast and slow instances.
import sys, re, statistics, itertools
rows=[]
for line in open(sys.argv[1]):
    if not line.startswith('DIAG'): continue
    f=line.split()
    d={f[i]:f[i+1] for i in range(1,len(f)-1,2)}
    if int(d['ops'])<1000000: continue
    a={k:int(v,16) for k,v in d.items() if k not in ('ns_per_pair','ops') and v.startswith('0x')}
    rows.append((float(d['ns_per_pair']), a))
ns=sorted(r[0] for r in rows)
print('n',len(rows),'min',ns[0],'median',statistics.median(ns),'max',ns[-1])
thr=float(sys.argv[2]) if len(sys.argv)>2 else statistics.median(ns)
keys=sorted(rows[0][1])
for x,y in itertools.combinations(keys,2):
    def alias(a):
        dd=(a[x]-a[y])%4096
        return min(dd,4096-dd)<64
    fast=[r for r in rows if r[0]<thr]; slow=[r for r in rows if r[0]>=thr]
    fa=sum(alias(r[1]) for r in fast); sa=sum(alias(r[1]) for r in slow)
    if fa+sa: print(f'{x}~{y} (within 64 B mod 4 KiB): fast {fa}/{len(fast)} slow {sa}/{len(slow)}')
for k in keys:
    print(k, 'low12 fast', sorted({(r[1][k]&0xfff) for r in rows if r[0]<thr})[:12], 'slow', sorted({(r[1][k]&0xfff) for r in rows if r[0]>=thr})[:12])
# Per address, the instances grouped by its low 12 bits: count, median, min and max ns per pair.
for k in keys:
    groups = {}
    for r in rows:
        groups.setdefault(r[1][k] & 0xfff, []).append(r[0])
    print(k, 'by low 12 bits:', {g: (len(v), round(statistics.median(v), 1), round(min(v), 1), round(max(v), 1))
                                  for g, v in sorted(groups.items())})
