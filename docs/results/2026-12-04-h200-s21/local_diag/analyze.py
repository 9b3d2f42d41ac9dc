import json,glob,statistics as st,itertools,collections,sys,os
DIR=sys.argv[1]  # where placement_runs.tgz was unpacked
rows={v:[] for v in json.load(open(sorted(glob.glob(os.path.join(DIR,'d_*.json')))[0]))['variants']}
for f in sorted(glob.glob(os.path.join(DIR,'d_*.json'))):
    j=json.load(open(f)); err=f.replace('.json','.err')
    addrs={}
    for l in open(err):
        if not l.startswith('DIAG'): continue
        p=l.split(); var,inst=p[1],int(p[2])
        addrs[(var,inst)]={k:int(v,16) for k,v in (x.split('=') for x in p[3:]) if v!='(nil)'}
    for var in rows:
        v=j['variants'][var]; m=min(v['instance_medians'])
        for i,x in enumerate(v['instance_medians']):
            rows[var].append((x/m, addrs[(var,i)], f))
for var,rs in rows.items():
    rel=[r for r,_,_ in rs]
    slow=[r for r in rs if r[0]>1.05]; fast=[r for r in rs if r[0]<1.02]
    print(var, 'n',len(rs),'slow(>1.05)',len(slow),'fast(<1.02)',len(fast), 'max', max(rel))
    keys=sorted(rs[0][1])
    res=[]
    for a,b in itertools.combinations(keys,2):
        def near(ad, lim=64):
            d=(ad[a]-ad[b])%4096; d=min(d,4096-d); return d<lim
        fs=sum(near(x[1]) for x in slow)/max(1,len(slow)); ff=sum(near(x[1]) for x in fast)/max(1,len(fast))
        res.append((fs-ff,a,b,fs,ff))
    res.sort(reverse=True)
    for r in res[:6]: print('   %s~%s slow %.2f fast %.2f'%(r[1],r[2],r[3],r[4]))
    # single address low12 ranges
    for k in keys:
        s=[x[1][k]&0xfff for x in slow]; 
        print('   ',k,'slow low12:', sorted(set(hex(v) for v in s))[:12])
print()
for var,rs in rows.items():
    keys=sorted(rs[0][1])
    for r,ad,f in sorted(rs,key=lambda x:-x[0])[:16]:
        near=[]
        for a,b in itertools.combinations(keys,2):
            d=(ad[a]-ad[b])%4096; d=min(d,4096-d)
            if d<64: near.append('%s~%s:%d'%(a,b,d))
        print(var,'%.3f'%r,' '.join(near))
