"""The 2D puzzles' cuDNN and Triton anchors, measured on the device in the same run as `runner bench`.

For each full-scale shape of puzzles 09 and 10 (4096 x 4096 with 3x3 and 15x15, 8192 x 8192 with
5x5, single channel, valid, float32): PyTorch's conv2d (cuDNN, TF32 off) and a Triton program of
the seed's algorithm and block size (one program per 32 x 32 output tile, one shifted tile loaded
per kernel position; written for this workbook, as in chapter 09), each checked against the other
and timed with CUDA events (median of --runs launches after --warmup, the input rotated among
copies larger than L2 so the caches start cold); and the device copy bandwidth (a clone of 1 GiB,
read and written) that sets the memory floor. Prints a table and, with --json FILE, writes it.

Run on the device: python3 bench/conv2d_anchors.py --json $OUT/anchors.json
"""

import argparse
import json

import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_tile(x_ptr, k_ptr, out_ptr, in_rows, in_cols, in_stride, k_rows, k_cols, out_stride,
                ROW_BLOCK: tl.constexpr, COL_BLOCK: tl.constexpr):
    out_rows = in_rows - k_rows + 1
    out_cols = in_cols - k_cols + 1
    rows = tl.program_id(0) * ROW_BLOCK + tl.arange(0, ROW_BLOCK)
    cols = tl.program_id(1) * COL_BLOCK + tl.arange(0, COL_BLOCK)
    inside = (rows[:, None] < out_rows) & (cols[None, :] < out_cols)
    acc = tl.zeros((ROW_BLOCK, COL_BLOCK), dtype=tl.float32)
    for i in range(k_rows):
        for j in range(k_cols):
            tap = tl.load(k_ptr + i * k_cols + j)
            at = (rows[:, None] + i) * in_stride + (cols[None, :] + j)
            acc += tap * tl.load(x_ptr + at, mask=inside, other=0.0)
    tl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], acc, mask=inside)


def triton_conv(x, k, out):
    n_rows, n_cols = x.shape
    kr, kc = k.shape
    grid = (triton.cdiv(n_rows - kr + 1, 32), triton.cdiv(n_cols - kc + 1, 32))
    conv2d_tile[grid](x, k, out, n_rows, n_cols, x.stride(0), kr, kc, out.stride(0),
                      ROW_BLOCK=32, COL_BLOCK=32)


def torch_conv(x, k, out):
    out.copy_(torch.nn.functional.conv2d(x[None, None], k[None, None])[0, 0])


def cudnn_only(x, k, _out):
    torch.nn.functional.conv2d(x[None, None], k[None, None])


def median_us(fn, inputs, k, out, warmup, runs):
    for i in range(warmup):
        fn(inputs[i % len(inputs)], k, out)
    times = []
    for i in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(inputs[i % len(inputs)], k, out)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return times[len(times) // 2]


def copy_gbps():
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        b.copy_(a)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    times.sort()
    return 2 * a.numel() * 4 / times[len(times) // 2] / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    gbps = copy_gbps()
    device = torch.cuda.get_device_name()
    print(f"{device}: device copy {gbps:.0f} GB/s; torch {torch.__version__}, triton {triton.__version__}")
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(14)
    for n, kk in [(4096, 3), (4096, 15), (8192, 5)]:
        copies = max(1, (256 << 20) // (n * n * 4) + 1)
        inputs = [torch.rand(n, n, device="cuda", generator=gen) * 2 - 1 for _ in range(copies)]
        k = torch.rand(kk, kk, device="cuda", generator=gen) * 2 - 1
        m = n - kk + 1
        out = torch.empty(m, m, device="cuda")
        ref = torch.empty_like(out)
        torch_conv(inputs[0], k, ref)
        triton_conv(inputs[0], k, out)
        err = (out - ref).abs().max().item()
        floor_us = (n * n + m * m) * 4 / (gbps * 1e9) * 1e6
        flop = 2 * m * m * kk * kk
        row = {
            "shape": f"{n}x{n} {kk}x{kk}",
            "gflop": flop / 1e9,
            "memory_floor_us": floor_us,
            "cudnn_us": median_us(cudnn_only, inputs, k, out, args.warmup, args.runs),
            "triton_32x32_us": median_us(triton_conv, inputs, k, out, args.warmup, args.runs),
            "triton_vs_cudnn_max_abs_diff": err,
        }
        rows.append(row)
        print(f"{row['shape']:>14}: {row['gflop']:.2f} GFLOP, memory floor {floor_us:.1f} us; "
              f"cuDNN {row['cudnn_us']:.1f} us, seed Triton 32x32 {row['triton_32x32_us']:.1f} us "
              f"(max |triton - cudnn| {err:.1e})")
        del inputs, out, ref
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "copy_gbps": gbps, "torch": torch.__version__,
                       "triton": triton.__version__, "shapes": rows}, f, indent=2)


if __name__ == "__main__":
    main()
