# Inner-loop statistics of each kernel in a `cuobjdump -sass` listing: for every backward branch, the
# instructions, FFMAs, register-file reads per FFMA (source registers not served by the .reuse cache of
# the previous FFMA), FFMAs with two such reads in one bank (register number mod 2), other opcodes.
import re, sys
def analyze(seg):
    n = ffma = reads = conflicts = other = 0
    prev = None
    for addr, t in seg:
        n += 1
        if not t.startswith('FFMA'):
            other += 1; prev = None; continue
        ffma += 1
        ops = [o.strip() for o in t[4:].split(',')]
        srcs = ops[1:]
        cur = []; rf = []
        for k, o in enumerate(srcs):
            m = re.match(r'(-?)R(\d+)(\.reuse)?', o)
            if not m: cur.append(None); continue
            r = int(m.group(2)); cur.append((r, bool(m.group(3))))
            hit = prev is not None and prev[k] is not None and prev[k][0] == r and prev[k][1]
            if not hit: rf.append(r)
        rf = list(dict.fromkeys(rf))
        reads += len(rf)
        b = [r % 2 for r in rf]
        if len(b) >= 2 and (b.count(0) >= 2 or b.count(1) >= 2): conflicts += 1
        prev = cur
    return n, ffma, reads, conflicts, other
for part in open(sys.argv[1]).read().split('Function : ')[1:]:
    name = part.split('\n')[0]
    ins = []
    for l in part.split('\n'):
        m = re.match(r'\s+/\*([0-9a-f]{4})\*/\s+(.*?);', l)
        if m: ins.append((int(m.group(1), 16), m.group(2).strip()))
    for i, (a, t) in enumerate(ins):
        m = re.search(r'BRA (0x[0-9a-f]+)', t)
        if m and int(m.group(1), 16) < a:
            tgt = int(m.group(1), 16)
            seg = [x for x in ins if tgt <= x[0] <= a]
            n, f, r, c, o = analyze(seg)
            if f > 20:
                kinds = {}
                [kinds.__setitem__(t.split()[0].split(".")[0], kinds.get(t.split()[0].split(".")[0], 0) + 1) for _, t in seg if not t.startswith("FFMA")]
                print(f"{name[:28]} loop {tgt:#x}-{a:#x}: {n} instr, {f} FFMA, {o} other, RF reads/FFMA {r/f:.2f}, same-bank(r%2) in {c} FFMAs; cycles~(instr+conf)/FFMA {(n+c)/f:.3f}; other {kinds}")
