import re, math, sys
rows=[]
for l in open(sys.argv[1]):
    name, macros, regs, st = l.rstrip('\n').split('|')
    d = dict(re.findall(r'-D(\w+)=(\d+)', macros)); R=int(d['PER_THREAD']); T=int(d['THREADS'])
    m = re.search(r'(\d+) instr, (\d+) FFMA.*RF reads/FFMA ([\d.]+), same-bank\(r%2\) in (\d+)', st)
    if not m: print(name, 'no loop', st[:80]); continue
    n,f,rd,c = int(m[1]),int(m[2]),float(m[3]),int(m[4])
    r2u = int(re.search(r"'R2UR': (\d+)", st)[1]) if 'R2UR' in st else 0
    rg = int(re.search(r'(\d+) reg', regs)[1])
    out = 1498954
    blocks = math.ceil(out/(T*R)); wpb = T//32
    maxb = 65536//(math.ceil(rg/8)*8*T)
    q = math.ceil(blocks/132)
    note = '2waves' if q > maxb else ''
    wps = math.ceil(q*wpb/4)
    tq = R if d.get('TAIL')=='1' else 2*R
    taps = math.ceil(2047/tq)*tq
    fc = wps*R*taps
    rows.append((fc*(n+c)/f/1.95e3, name, rg, n/f, (n+c)/f, rd, r2u, wps, q, note, fc*n/f/1.95e3))
rows.sort()
print("name regs instr/FFMA (instr+conf)/FFMA RFreads R2UR warps/SMSP blocks/SM  model_us(conf) model_us(noconf)")
for r in rows: print(f"{r[1]:16s} {r[2]:4d} {r[3]:.3f} {r[4]:.3f} {r[5]:.2f} {r[6]:3d} {r[7]:3d} {r[8]:3d} {r[9]:6s} {r[0]:6.1f} {r[10]:6.1f}")
