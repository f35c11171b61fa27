"""Puzzle 09's solution at 4096 x 4096, 3x3, under several block shapes (ROW_BLOCK x COL_BLOCK),
timed with cupy (CUDA events, median of 50 after 5 warm-up launches), to choose the shape the
runner uses for the full-scale cases. Usage: python3 blocks09.py FILE.cu [FILE.cu ...]
"""

import sys

import cupy as cp

N, K = 4096, 3
M = N - K + 1
x = cp.random.default_rng(9).uniform(-1, 1, (N, N), dtype=cp.float32)
k = cp.random.default_rng(10).uniform(-1, 1, (K, K), dtype=cp.float32)
for path in sys.argv[1:]:
    code = open(path).read()
    for rows, cols in [(8, 32), (16, 32), (32, 32), (4, 64), (8, 64), (2, 128), (4, 32)]:
        mod = cp.RawModule(code=code, options=(f"-DROW_BLOCK={rows}", f"-DCOL_BLOCK={cols}"))
        fn = mod.get_function("conv2d")
        out = cp.empty((M, M), dtype=cp.float32)
        grid = ((M + cols - 1) // cols, (M + rows - 1) // rows)
        args = (x, k, out, cp.int32(N), cp.int32(N), cp.int32(N), cp.int32(K), cp.int32(K), cp.int32(M))
        for _ in range(5):
            fn(grid, (cols, rows), args)
        times = []
        for _ in range(50):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            fn(grid, (cols, rows), args)
            b.record()
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
        times.sort()
        print(f"{path.split('/')[-1]:>24} ROW_BLOCK {rows:>3} COL_BLOCK {cols:>3}: {times[25]:.1f} us", flush=True)
