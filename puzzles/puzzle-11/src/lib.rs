//! Puzzle 11: implicit GEMM on tensor cores. Many channels start here.
//!
//! `conv2d_nhwc(input, weight, output, batch, input_rows, input_cols, input_channels,
//! output_channels, kernel_rows, kernel_cols)`: input `[batch][input_rows][input_cols][IC]`,
//! weight `[kernel_rows][kernel_cols][IC][OC]` (HWIO), output `[batch][output_rows][output_cols]
//! [OC]`, all dense; stride 1, no padding, cross-correlation:
//!
//! ```text
//! output[b][r][c][o] = sum over i < KR, j < KC, ch < IC of input[b][r + i][c + j][ch] * weight[i][j][ch][o]
//! ```
//!
//! Read as a matrix product, `output[M, OC] = A[M, K] x weight[K, OC]` with M = batch *
//! output_rows * output_cols, K = KR * KC * IC, and row m of A the input window under output
//! pixel m, flattened in the weight's (i, j, ch) order: A is im2col(input), which the kernel never
//! builds, only indexes. The kernel declares `extern "C" __device__ const int launch_shape[4] =
//! {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};` and the runner launches ceil(M / BLOCK_M) x
//! ceil(OC / BLOCK_N) blocks of THREADS threads with SHARED_BYTES of dynamic shared memory
//! ([`spec::gemm_shape`]).
//!
//! # The tolerance
//!
//! tf32 keeps 10 of float32's 23 mantissa bits, so each product is off by up to about 2^-10 of
//! itself; over K terms of random sign the error grows like sqrt(K), as the outputs themselves
//! do. `atol = 0.05, rtol = 0.01` holds the tf32 error of K = 1,152 (the largest full case) with
//! margin in any summation order and with truncation instead of rounding, while one skipped
//! channel or tap moves some output of every case far past it; the tests in `tests.rs`
//! (`tf32_sums_in_any_order_pass_with_margin`, `a_skipped_channel_or_tap_fails_every_case`) hold
//! both sides, measured on every small case and on sampled outputs of the full ones.

pub mod cases;

use rayon::prelude::*;
use spec::TENSOR_CORE_BUDGET;
use spec::{DeclaredLaunch, LaunchRule, Param, ParamType, Puzzle, Tolerance};

/// The array the kernel declares its launch in.
pub const SHAPE_SYMBOL: &str = "launch_shape";

const fn int(name: &'static str) -> Param {
    Param {
        name,
        ty: ParamType::I32,
    }
}

/// The fixed interface (the chapter's "Contract and launch").
pub const PARAMS: &[Param] = &[
    Param {
        name: "input",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "weight",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "output",
        ty: ParamType::F32Ptr,
    },
    int("batch"),
    int("input_rows"),
    int("input_cols"),
    int("input_channels"),
    int("output_channels"),
    int("kernel_rows"),
    int("kernel_cols"),
];

pub const TOLERANCE: Tolerance = Tolerance {
    atol: 0.05,
    rtol: 0.01,
};

/// The sizes of one convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv {
    pub batch: usize,
    pub rows: usize,
    pub cols: usize,
    pub ic: usize,
    pub oc: usize,
    pub kr: usize,
    pub kc: usize,
}

impl Conv {
    pub fn out_rows(&self) -> usize {
        self.rows + 1 - self.kr
    }

    pub fn out_cols(&self) -> usize {
        self.cols + 1 - self.kc
    }

    /// Rows of the product: output pixels.
    pub fn m(&self) -> usize {
        self.batch * self.out_rows() * self.out_cols()
    }

    /// The product's inner dimension: one window's values.
    pub fn k(&self) -> usize {
        self.kr * self.kc * self.ic
    }

    pub fn input_len(&self) -> usize {
        self.batch * self.rows * self.cols * self.ic
    }

    pub fn weight_len(&self) -> usize {
        self.kr * self.kc * self.ic * self.oc
    }

    /// Multiply-adds.
    pub fn work(&self) -> u64 {
        (self.m() * self.oc * self.k()) as u64
    }

    /// Where row `m` of im2col(input) starts: the input offset of tap (0, 0), channel 0 of the
    /// window under output pixel `m`.
    pub fn window(&self, m: usize) -> usize {
        let (oc, or) = (self.out_cols(), self.out_rows());
        let (b, r, c) = (m / (or * oc), m / oc % or, m % oc);
        ((b * self.rows + r) * self.cols + c) * self.ic
    }

    /// The input offset of element `k` of a window (k in the weight's (i, j, ch) order).
    pub fn tap(&self, k: usize) -> usize {
        let (i, j, ch) = (k / (self.kc * self.ic), k / self.ic % self.kc, k % self.ic);
        (i * self.cols + j) * self.ic + ch
    }
}

/// The convolution in f64, output pixels in parallel: each pixel accumulates one row of OC
/// values, walking the window in the weight's order.
pub fn reference(conv: &Conv, input: &[f32], weight: &[f32]) -> Vec<f64> {
    assert_eq!(input.len(), conv.input_len());
    assert_eq!(weight.len(), conv.weight_len());
    let mut out = vec![0f64; conv.m() * conv.oc];
    out.par_chunks_mut(conv.oc)
        .enumerate()
        .for_each(|(m, acc)| {
            let base = conv.window(m);
            for i in 0..conv.kr {
                for j in 0..conv.kc {
                    let x = &input[base + (i * conv.cols + j) * conv.ic..][..conv.ic];
                    let w = &weight[(i * conv.kc + j) * conv.ic * conv.oc..][..conv.ic * conv.oc];
                    for (ch, &xv) in x.iter().enumerate() {
                        let xv = f64::from(xv);
                        for (a, &wv) in acc.iter_mut().zip(&w[ch * conv.oc..][..conv.oc]) {
                            *a += xv * f64::from(wv);
                        }
                    }
                }
            }
        });
    out
}

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-11",
        title: "Implicit GEMM on tensor cores",
        grade: 5,
        kernel: "conv2d_nhwc",
        params: PARAMS,
        teaches: "multi-channel conv as output[M, OC] = im2col(input)[M, K] x weight[K, OC], im2col never built: BLOCK_M x BLOCK_N tiles, K tiles through shared memory, mma.sync in tf32",
        hints: &[
            "Get the indexing right before the speed: one thread per output (m, o) with m = blockIdx.x * BLOCK_M + ..., o = blockIdx.y * BLOCK_N + ...; pixel m is (b, r, c) with c = m % output_cols, r = m / output_cols % output_rows, b = m / (output_cols * output_rows), and element k of its window is tap (i, j) = (k / (KC * IC), k / IC % KC), channel k % IC: input[((b * input_rows + r + i) * input_cols + c + j) * IC + ch] times weight[k * OC + o].",
            "Stage the product through shared memory a K tile at a time: BLOCK_M rows of im2col and BLOCK_N columns of the weight, BLOCK_K wide (a multiple of 8). Zero what lies past M, OC or K (K = KR * KC * IC is rarely a multiple of BLOCK_K: 3 channels and a 3x3 kernel give 27), and __syncthreads() both after the tile is written and before it is overwritten.",
            "On tensor cores a warp computes a 16 x 8 block per `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: lane l holds A at rows l/4 and l/4 + 8, columns l%4 and l%4 + 4; B at k = l%4 and l%4 + 4, column l/4; and C at rows l/4 and l/4 + 8, columns 2 * (l%4) and 2 * (l%4) + 1. Round each float to tf32 with `cvt.rna.tf32.f32` as you load the fragment.",
            "For speed, give each warp a 64 x 32 (or 64 x 64) block of the tile, 4 x 4 (or 4 x 8) mma tiles, so each fragment is reused by several mma's, pad shared rows (a row of BLOCK_K + 4 floats) so the fragment loads hit 32 different banks, and load the next K tile with cp.async while the tensor cores work on this one (two buffers, cp.async.wait_group and one barrier per K tile).",
        ],
        budget: Some(TENSOR_CORE_BUDGET),
        tolerance: TOLERANCE,
        cases: |scale| budgeted(cases::cases(scale)),
        shrink: Some(cases::shrink),
        declared_launch: Some(DeclaredLaunch {
            symbol: SHAPE_SYMBOL,
            rule: LaunchRule::Gemm,
        }),
        fresh: Some(|seed, scale| budgeted(cases::fresh(seed, scale))),
        draw: None,
    }
}

/// `cases` with the tensor-core budget: K = kernel_rows * kernel_cols * input_channels
/// multiply-adds per output.
fn budgeted(mut cases: Vec<spec::Case>) -> Vec<spec::Case> {
    for c in &mut cases {
        let k = ["kernel_rows", "kernel_cols", "input_channels"]
            .iter()
            .map(|n| c.job.scalar(n).unwrap_or(1).max(1) as u64)
            .product();
        c.job.tensor_core_budget(k);
    }
    cases
}

#[cfg(test)]
mod tests;
