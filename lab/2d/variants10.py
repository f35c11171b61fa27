"""Puzzle 10 kernel variants on the three full-scale shapes, timed with cupy (CUDA events, median of
30 after 5 warm-up launches), each launched as the runner launches it: the shape read from the
file's BLOCK_X, BLOCK_Y, PER_THREAD defines (TILE_ROWS = BLOCK_Y * PER_THREAD, TILE_COLS = BLOCK_X),
4 * (TILE_ROWS + KR - 1) * (TILE_COLS + KC - 1) bytes of dynamic shared memory. Correctness is the
runner's business (`runner check puzzle-10 --kernel FILE`); this only times.
Usage: python3 variants10.py FILE.cu [FILE.cu ...]
"""

import re
import sys

import cupy as cp

shapes = [(4096, 3), (4096, 15), (8192, 5)]
data = {}
for n, kk in shapes:
    data[(n, kk)] = (cp.random.default_rng(n + kk).uniform(-1, 1, (n, n), dtype=cp.float32),
                     cp.random.default_rng(kk).uniform(-1, 1, (kk, kk), dtype=cp.float32))
for path in sys.argv[1:]:
    code = open(path).read()
    d = {m[0]: int(m[1]) for m in re.findall(r"#define (BLOCK_X|BLOCK_Y|PER_THREAD) (\d+)", code)}
    bx, by, tr, tc = d["BLOCK_X"], d["BLOCK_Y"], d["BLOCK_Y"] * d["PER_THREAD"], d["BLOCK_X"]
    fn = cp.RawModule(code=code, options=("-std=c++17",)).get_function("conv2d")
    line = []
    for n, kk in shapes:
        x, k = data[(n, kk)]
        m = n - kk + 1
        out = cp.empty((m, m), dtype=cp.float32)
        smem = 4 * (tr + kk - 1) * (tc + kk - 1)
        if smem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = smem
        grid = ((m + tc - 1) // tc, (m + tr - 1) // tr)
        args = (x, k, out, cp.int32(n), cp.int32(n), cp.int32(n), cp.int32(kk), cp.int32(kk), cp.int32(m))
        for _ in range(5):
            fn(grid, (bx, by), args, shared_mem=smem)
        times = []
        for _ in range(30):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            fn(grid, (bx, by), args, shared_mem=smem)
            b.record()
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
        times.sort()
        line.append(f"{n}x{n} {kk}x{kk} {times[15]:7.1f} us")
    print(f"{path.split('/')[-1]:>12} ({bx}x{by}, tile {tr}x{tc}, {getattr(fn, 'num_regs', '?')} regs): " + "; ".join(line), flush=True)
