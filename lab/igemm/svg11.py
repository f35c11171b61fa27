# Writes puzzle 11's four pictures (book/src/img/puzzle-11-*.svg); run from anywhere: python3 lab/igemm/svg11.py
# (the output folder below is this checkout's book/src/img).
import html
def svg(name, w, h, title, body, fs=13):
    out=[f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{fs}">',
         f'  <title>{html.escape(title)}</title>',
         f'  <rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>']
    out+=['  '+b for b in body]
    out.append('</svg>\n')
    open(__import__('os').path.join(__import__('os').path.dirname(__file__), '../../book/src/img', name), 'w').write('\n'.join(out))
def rect(x,y,w,h,fill,stroke="#555",extra=""):
    return f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="{stroke}"{extra}/>'
def text(x,y,s,fill="#222",size=None,anchor=None,mono=False):
    a=f' font-size="{size}"' if size else ''
    a+=f' text-anchor="{anchor}"' if anchor else ''
    a+=' font-family="monospace"' if mono else ''
    return f'<text x="{x}" y="{y}" fill="{fill}"{a}>{html.escape(s)}</text>'
def line(x1,y1,x2,y2,stroke="#555",extra=""):
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{stroke}"{extra}/>'

# 1. im2col as a view
b=[]
b.append(text(20,24,"input (NHWC): each pixel IC floats"))
cell=30; x0,y0=30,44
for r in range(6):
    for c in range(7):
        inwin = 1<=r<=3 and 2<=c<=4
        b.append(rect(x0+c*cell,y0+r*cell,cell,cell,"#cfe2ff" if inwin else "#f2f2f2"))
b.append(rect(x0+2*cell,y0+1*cell,3*cell,3*cell,"none","#c0392b",' stroke-width="3"'))
b.append(text(x0+2*cell+4,y0+1*cell+19,"(0,0)",size=10))
b.append(text(x0+4*cell+4,y0+3*cell+19,"(2,2)",size=10))
b.append(text(x0,y0+6*cell+22,"the window under pixel"))
b.append(text(x0,y0+6*cell+40,"m = (b, r, c) starts at"))
b.append(text(x0,y0+6*cell+58,"window(m) ="))
b.append(text(x0,y0+6*cell+76,"((b*rows + r)*cols + c)*IC",mono=True,size=11))
# row of A
ax=300; ay=90
b.append(text(ax,24,"row m of A = im2col(input): K = KR * KC * IC values"))
b.append(text(ax,42,"in the weight's order k = (i * KC + j) * IC + ch"))
cols=[("(0,0)","#cfe2ff"),("(0,1)","#b9d4fb"),("(0,2)","#a5c6f7"),("(1,0)","#cfe2ff"),("...","#f2f2f2"),("(2,2)","#a5c6f7")]
wseg=70
for i,(lab,f) in enumerate(cols):
    b.append(rect(ax+i*wseg,ay,wseg,32,f))
    b.append(text(ax+i*wseg+wseg/2,ay+21,lab,anchor="middle"))
b.append(text(ax,ay-8,"k = 0",size=11))
b.append(text(ax+6*wseg,ay-8,"K - 1",size=11,anchor="end"))
b.append(text(ax,ay+52,"each tap (i, j): IC neighbouring floats of the input,"))
b.append(text(ax,ay+70,"starting at window(m) + tap(k), tap(k) = (i * cols + j) * IC"))
b.append(text(ax,ay+106,"A[m][k] = input[window(m) + tap(k)]",mono=True))
b.append(text(ax,ay+134,"A is M x K, about KR * KC times the input's size:"))
b.append(text(ax,ay+152,"nobody writes it out. A block reads the pieces of it"))
b.append(text(ax,ay+170,"it needs straight from the input, as an index."))
svg("puzzle-11-im2col.svg",740,330,"im2col as a view: output pixel m's 3 x 3 window of the NHWC input, flattened tap by tap and channel by channel, is row m of A; A[m][k] is input[window(m) + tap(k)], an index and never an array",b)

# 2. block tile
b=[]
gx,gy=250,120; cw,ch=40,30
# weight on top
b.append(rect(gx,30,4*cw,60,"#fde2c8"))
b.append(text(gx+2*cw,56,"weight: K x OC",anchor="middle"))
b.append(text(gx+2*cw,76,"(HWIO, OC contiguous)",anchor="middle",size=11))
# A on left
b.append(rect(30,gy,170,6*ch,"#cfe2ff"))
b.append(text(115,gy+3*ch-6,"A = im2col(input)",anchor="middle"))
b.append(text(115,gy+3*ch+12,"M x K",anchor="middle"))
b.append(text(115,gy+3*ch+30,"(never built)",anchor="middle",size=11))
# output grid: 4 col blocks (last a tail), 6 row blocks
for r in range(6):
    for c in range(4):
        tail = (c==3) or (r==5)
        b.append(rect(gx+c*cw,gy+r*ch,cw,ch,"#eeeeee" if tail else "#d8f0d8"))
b.append(rect(gx+1*cw,gy+2*ch,cw,ch,"#7fc97f"))
b.append(line(gx+1*cw+cw/2,90,gx+1*cw+cw/2,gy+2*ch,"#c0392b",' stroke-dasharray="4 3"'))
b.append(line(200,gy+2*ch+ch/2,gx+1*cw,gy+2*ch+ch/2,"#c0392b",' stroke-dasharray="4 3"'))
b.append(text(gx+4*cw+16,gy+2*ch+20,"block (x, y) = (2, 1): rows 2 * BLOCK_M ..,"))
b.append(text(gx+4*cw+16,gy+2*ch+38,"columns 1 * BLOCK_N .. of the output"))
b.append(text(gx+4*cw+16,gy+5*ch+20,"tails: the last row and column of blocks"))
b.append(text(gx+4*cw+16,gy+5*ch+38,"run past M and OC; load zeros, store nothing"))
b.append(text(gx,gy+6*ch+24,"output = A x weight: M = batch * out_rows * out_cols rows of OC"))
b.append(text(gx,gy+6*ch+42,"grid: ceil(M / BLOCK_M) x ceil(OC / BLOCK_N) blocks of THREADS threads"))
svg("puzzle-11-tile.svg",760,380,"The output as the product of A (M x K) and the weight (K x OC): a grid of BLOCK_M x BLOCK_N tiles, one block each; the block at (2, 1) takes rows of A and columns of the weight; the last row and column of tiles are tails",b)

# 3. K loop
b=[]
b.append(text(20,24,"one block, K walked in tiles of BLOCK_K; STAGES = 2 buffers in shared memory"))
sx=30
for s,(lab,f) in enumerate([("stage 0","#cfe2ff"),("stage 1","#fde2c8")]):
    y=50+s*110
    b.append(text(sx,y+14,lab))
    b.append(rect(sx+80,y,100,80,f))
    b.append(text(sx+130,y+36,"A tile",anchor="middle"))
    b.append(text(sx+130,y+54,"BLOCK_M x BLOCK_K",anchor="middle",size=10))
    b.append(rect(sx+200,y,120,40,f))
    b.append(text(sx+260,y+18,"weight tile",anchor="middle"))
    b.append(text(sx+260,y+33,"BLOCK_K x BLOCK_N",anchor="middle",size=10))
# timeline
tx=420; ty=60
b.append(text(tx,ty-12,"time: K tiles kt = 0, 1, 2, ..."))
steps=[("copy 0","#cfe2ff",0,0),("copy 1","#fde2c8",1,0),("copy 2","#cfe2ff",2,0),("copy 3","#fde2c8",3,0),
       ("mma 0","#d8f0d8",1,1),("mma 1","#d8f0d8",2,1),("mma 2","#d8f0d8",3,1)]
for lab,f,col,row in steps:
    b.append(rect(tx+col*78,ty+row*34,76,26,f))
    b.append(text(tx+col*78+38,ty+row*34+17,lab,anchor="middle",size=11))
b.append(text(tx+4*78+4,ty+17,"cp.async",size=11))
b.append(text(tx+4*78+4,ty+51,"mma.sync",size=11))
for col in range(1,4):
    b.append(line(tx+col*78-1,ty-4,tx+col*78-1,ty+64,"#c0392b",' stroke-width="2"'))
b.append(text(tx,ty+92,"red: cp.async.wait_group, then __syncthreads():"))
b.append(text(tx,ty+110,"the tile about to be used has landed for all,"))
b.append(text(tx,ty+128,"and the stage about to be refilled is no longer read."))
b.append(text(tx,ty+156,"Copies of tile kt + 1 run while the tensor cores"))
b.append(text(tx,ty+174,"work on tile kt; zeros past M, K and OC."))
b.append(text(sx,282,"A tile row m, columns k0 .. k0 + BLOCK_K - 1: input[window(m) + tap(k)],"))
b.append(text(sx,300,"16 bytes per cp.async where IC and OC are multiples of 4, one float otherwise"))
svg("puzzle-11-kloop.svg",800,320,"The K loop through shared memory: two stages, each an A tile and a weight tile; while the mma's read one stage, cp.async fills the other with the next K tile, and a wait and a barrier separate each step",b)

# 4. fragments of m16n8k8 tf32
b=[]
c=26; rh=16
ax,ay=30,70
b.append(text(20,22,"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: lane l, g = l / 4, t = l % 4",mono=True,size=12))
b.append(text(ax,ay-12,"A: 16 x 8 (row m, column k)"))
for r in range(16):
    for k in range(8):
        g=r%8; t=k%4; lane=4*g+t; reg=(1 if r>=8 else 0)+(2 if k>=4 else 0)
        f=["#cfe2ff","#b9d4fb","#e3d3f5","#d3c0ee"][reg]
        b.append(rect(ax+k*c,ay+r*rh,c,rh,f,"#888"))
        b.append(text(ax+k*c+c/2,ay+r*rh+12,f"{lane}",anchor="middle",size=9))
b.append(text(ax,ay+16*rh+18,"a0: (g, t)   a1: (g + 8, t)",size=12))
b.append(text(ax,ay+16*rh+34,"a2: (g, t + 4)   a3: (g + 8, t + 4)",size=12))
bx=ax+8*c+40
b.append(text(bx,ay-12,"B: 8 x 8 (k, column n)"))
for k in range(8):
    for n in range(8):
        lane=4*n+k%4; reg=1 if k>=4 else 0
        b.append(rect(bx+n*c,ay+k*rh,c,rh,["#fde2c8","#f9cc9f"][reg],"#888"))
        b.append(text(bx+n*c+c/2,ay+k*rh+12,f"{lane}",anchor="middle",size=9))
b.append(text(bx,ay+8*rh+18,"b0: (k = t, n = g)",size=12))
b.append(text(bx,ay+8*rh+34,"b1: (k = t + 4, n = g)",size=12))
b.append(text(bx,ay+8*rh+58,"B is read down a column:",size=12))
b.append(text(bx,ay+8*rh+74,"the weight's rows are k, so",size=12))
b.append(text(bx,ay+8*rh+90,"lane (g, t) reads word",size=12))
b.append(text(bx,ay+8*rh+106,"t * B_STRIDE + g",size=12,mono=True))
cx=bx+8*c+40
b.append(text(cx,ay-12,"C, D: 16 x 8 (row m, column n)"))
for r in range(16):
    for n in range(8):
        g=r%8; t=n//2; lane=4*g+t
        reg=(2 if r>=8 else 0)+(n%2)
        b.append(rect(cx+n*c,ay+r*rh,c,rh,["#d8f0d8","#c2e6c2","#e8f5c8","#d9ecaa"][reg],"#888"))
        b.append(text(cx+n*c+c/2,ay+r*rh+12,f"{lane}",anchor="middle",size=9))
b.append(text(cx,ay+16*rh+18,"c0, c1: (g, 2t), (g, 2t + 1)",size=12))
b.append(text(cx,ay+16*rh+34,"c2, c3: (g + 8, 2t), (g + 8, 2t + 1)",size=12))
b.append(text(20,ay+16*rh+66,"Numbers are the lane holding each element; shades are its register. ldmatrix.x4 of four 8 x 4 pieces of A",size=12))
b.append(text(20,ay+16*rh+84,"(rows 0-7 and 8-15, columns 0-3 and 4-7) hands lane l exactly its a0 .. a3: lane l names row l % 8 of piece l / 8.",size=12))
svg("puzzle-11-fragment.svg",800,450,"The m16n8k8 tf32 fragments: which lane holds which element of A (16 x 8), B (8 x 8) and the accumulators C and D (16 x 8), and in which register",b)
