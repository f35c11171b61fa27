#!/usr/bin/env python3
"""numba's CUDA simulator on the naive convolution of puzzle-01, for the side-by-side figure.

Usage: NUMBA_ENABLE_CUDASIM=1 python3 kernels/conformance/bench/numba_sim.py [size conv]
(the variable is set here if missing). Prints multiply-adds per second. numba's simulator runs
each thread as a Python thread, so a small case is enough to measure its rate.
"""
import os
import sys
import time

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402


@cuda.jit
def conv1d(a, b, out, size, conv):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= size:
        return
    s = np.float32(0.0)
    j = 0
    while j < conv and i + j < size:
        s += a[i + j] * b[j]
        j += 1
    out[i] = s


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    conv = int(sys.argv[2]) if len(sys.argv) > 2 else 255
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, size).astype(np.float32)
    b = rng.uniform(-1, 1, conv).astype(np.float32)
    out = np.zeros(size, dtype=np.float32)
    tpb = 256
    macs = sum(min(conv, size - i) for i in range(size))
    t = time.perf_counter()
    conv1d[(size + tpb - 1) // tpb, tpb](a, b, out, size, conv)
    dt = time.perf_counter() - t
    want = np.array([np.dot(a[i:i + conv], b[:min(conv, size - i)]) for i in range(size)])
    assert np.allclose(out, want, atol=1e-4), "numba simulator result differs"
    print(f"numba CUDA simulator: size {size}, conv {conv}: {macs} multiply-adds in {dt:.2f} s"
          f" = {macs / dt / 1e6:.3f} M multiply-adds/s")


if __name__ == "__main__":
    main()
