"""Puzzle 11's anchors, measured on the device in the same run as `runner bench puzzle-11`.

For puzzle 11's three full-scale shapes (NHWC input, HWIO weight, 3x3, stride 1, no padding):
PyTorch's conv2d through cuDNN in channels-last memory format with float32 arithmetic
(allow_tf32 off), with TF32 tensor cores (allow_tf32 on) and in float16, each timed with CUDA events
(median of --runs launches after --warmup, the input rotated among copies of 256 MB or more, as
`runner bench` does), and the fp32 and tf32 results' largest error against a float64 convolution,
also as a share of puzzle 11's tolerance (0.05 + 0.01 |ref|). Beside them, cuBLAS's tf32 rate
on an 8192^3 matmul (torch.matmul, allow_tf32 on): the anchor for the tensor floor that
`runner bench` sets at the fastest rate it measures (`wgmma` on sm_90). Prints a table; --json
FILE writes it.

Run on the device: python3 bench/igemm_anchors.py --json $OUT/igemm_anchors.json
"""

import argparse
import json

import torch
import torch.nn.functional as F

SHAPES = [(16, 64, 64, 128), (32, 56, 64, 64), (8, 128, 128, 128)]


def median_us(fn, inputs, warmup, runs):
    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    pairs = []
    for i in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(inputs[i % len(inputs)])
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) * 1e3 for s, e in pairs)
    return times[len(times) // 2]


def errors(got, ref):
    d = (got.double() - ref).abs()
    return d.max().item(), (d / (0.05 + 0.01 * ref.abs())).max().item()


def cublas_tf32_tflops(warmup, runs, size=8192):
    """cuBLAS's tf32 rate on a size^3 float32 matmul, TFLOP/s at the median launch."""
    torch.backends.cuda.matmul.allow_tf32 = True
    gen = torch.Generator(device="cuda").manual_seed(12)
    a = torch.rand(size, size, device="cuda", generator=gen)
    b = torch.rand(size, size, device="cuda", generator=gen)
    us = median_us(lambda x: torch.matmul(x, b), [a], warmup, runs)
    torch.backends.cuda.matmul.allow_tf32 = False
    return 2 * size**3 / (us * 1e-6) / 1e12


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    device = torch.cuda.get_device_name()
    print(f"{device}: torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(11)
    for n, size, ic, oc in SHAPES:
        cl = torch.channels_last
        x = (torch.rand(n, ic, size, size, device="cuda", generator=gen) * 2 - 1).to(memory_format=cl)
        w = (torch.rand(oc, ic, 3, 3, device="cuda", generator=gen) * 2 - 1).to(memory_format=cl)
        copies = max(1, (256 << 20) // (x.numel() * 4) + 1)
        xs = [x.clone(memory_format=cl) for _ in range(copies)]
        ref = F.conv2d(x.double(), w.double())
        out = size - 2
        flop = 2 * n * out * out * oc * 9 * ic
        row = {"shape": f"N{n} {size}x{size} IC{ic} OC{oc}", "gflop": flop / 1e9}
        for label, tf32 in [("fp32", False), ("tf32", True)]:
            torch.backends.cudnn.allow_tf32 = tf32
            row[f"cudnn_{label}_us"] = median_us(lambda a: F.conv2d(a, w), xs, args.warmup, args.runs)
            row[f"cudnn_{label}_max_err"], row[f"cudnn_{label}_share_of_tolerance"] = errors(F.conv2d(x, w), ref)
        h, wh = [a.half() for a in xs], w.half()
        row["cudnn_fp16_us"] = median_us(lambda a: F.conv2d(a, wh), h, args.warmup, args.runs)
        rows.append(row)
        print(f"{row['shape']:>24}: {row['gflop']:.2f} GFLOP; cuDNN fp32 {row['cudnn_fp32_us']:.1f} us, "
              f"tf32 {row['cudnn_tf32_us']:.1f} us (max err {row['cudnn_tf32_max_err']:.2e}, "
              f"{row['cudnn_tf32_share_of_tolerance']:.2f} of the tolerance), fp16 {row['cudnn_fp16_us']:.1f} us")
        del x, xs, h, ref
        torch.cuda.empty_cache()
    cublas = cublas_tf32_tflops(args.warmup, args.runs)
    print(f"cuBLAS tf32 matmul 8192^3: {cublas:.1f} TFLOP/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "torch": torch.__version__,
                       "cudnn": torch.backends.cudnn.version(), "shapes": rows,
                       "cublas_tf32_8192_tflops": cublas}, f, indent=2)


if __name__ == "__main__":
    main()
