//! Puzzle 09: a 2D output tile per block. Two dimensions start here.
//!
//! `output[r * output_stride + c] = sum over i < kernel_rows, j < kernel_cols of
//! input[(r + i) * input_stride + c + j] * kernel[i * kernel_cols + j]` for r < output_rows =
//! input_rows - kernel_rows + 1 and c < output_cols = input_cols - kernel_cols + 1: valid,
//! cross-correlation, row-major, single channel. Rows are pitched: the strides count floats and may
//! exceed the widths; the input's padding holds NaN and the output's must be left as it was.
//! The CUDA translation of a Triton program that owns a ROW_BLOCK x COL_BLOCK output tile: a 2D
//! grid, one thread per output, accumulating kernel position by kernel position.
//!
//! This crate also holds what puzzle 10 shares: the parameter list, [`Image`], the reference, the
//! tolerance and the [`cases`].
//!
//! # The tolerance
//!
//! atol = rtol = 1e-3, puzzles 04 to 08's: an output is a sum of at most 31 * 31 = 961 products
//! of values in [-1, 1), and the test `tolerance_separates_float32_orders_from_a_skipped_tap`
//! shows float32 sums in row, column and fused orders stay far inside it at 15x15 while skipping
//! any one tap of a random case fails it.

pub mod cases;

use rayon::prelude::*;
use spec::{Param, ParamType, Puzzle, Scale, Tolerance};

/// The fixed interface of puzzles 09 and 10 (the chapter's "Contract and launch").
pub const PARAMS: &[Param] = &[
    Param {
        name: "input",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "kernel",
        ty: ParamType::ConstF32Ptr,
    },
    Param {
        name: "output",
        ty: ParamType::F32Ptr,
    },
    Param {
        name: "input_rows",
        ty: ParamType::I32,
    },
    Param {
        name: "input_cols",
        ty: ParamType::I32,
    },
    Param {
        name: "input_stride",
        ty: ParamType::I32,
    },
    Param {
        name: "kernel_rows",
        ty: ParamType::I32,
    },
    Param {
        name: "kernel_cols",
        ty: ParamType::I32,
    },
    Param {
        name: "output_stride",
        ty: ParamType::I32,
    },
];

pub const TOLERANCE: Tolerance = Tolerance {
    atol: 1e-3,
    rtol: 1e-3,
};

/// A row-major image of `rows` rows, each `stride` floats apart, the first `cols` of them values.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub data: Vec<f32>,
    pub rows: usize,
    pub cols: usize,
    pub stride: usize,
}

impl Image {
    /// A dense image (stride = cols).
    pub fn dense(rows: usize, cols: usize, data: Vec<f32>) -> Image {
        assert_eq!(data.len(), rows * cols, "{rows} x {cols} values");
        Image {
            data,
            rows,
            cols,
            stride: cols,
        }
    }

    pub fn at(&self, r: usize, c: usize) -> f32 {
        self.data[r * self.stride + c]
    }
}

/// The valid 2D cross-correlation in f64, rows `out_stride` long: the output's padding holds the
/// sentinel the runner puts there, which a correct kernel leaves alone. Rows in parallel.
pub fn reference(input: &Image, kernel: &Image, out_stride: usize) -> Vec<f64> {
    let out_rows = input.rows + 1 - kernel.rows;
    let out_cols = input.cols + 1 - kernel.cols;
    let mut out = vec![cases::sentinel(); out_rows * out_stride];
    out.par_chunks_mut(out_stride)
        .enumerate()
        .for_each(|(r, row)| {
            for (c, o) in row[..out_cols].iter_mut().enumerate() {
                let mut sum = 0f64;
                for i in 0..kernel.rows {
                    for j in 0..kernel.cols {
                        sum += f64::from(input.at(r + i, c + j)) * f64::from(kernel.at(i, j));
                    }
                }
                *o = sum;
            }
        });
    out
}

const BLOCKS: fn(u32, u32) -> cases::Layout = |rows, cols| cases::Layout::Blocks { rows, cols };

/// The full-scale launch: 32 x 8 blocks (one warp per output row of the tile, 256 threads).
pub const FULL: cases::Layout = cases::Layout::Blocks { rows: 8, cols: 32 };

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-09",
        title: "A 2D output tile per block",
        grade: 3,
        kernel: "conv2d",
        params: PARAMS,
        teaches: "a 2D grid of ROW_BLOCK x COL_BLOCK tiles, one thread per output, pitched rows, the guard in both directions",
        hints: &[
            "x walks the columns: c = blockIdx.x * COL_BLOCK + threadIdx.x and r = blockIdx.y * ROW_BLOCK + threadIdx.y. The output is (input_rows - kernel_rows + 1) x (input_cols - kernel_cols + 1).",
            "A row is `stride` floats long, not `cols`: element (r, c) of the input is input[r * input_stride + c], of the output output[r * output_stride + c]. The floats past the last column are padding: NaN in the input, not yours in the output.",
            "Guard both directions before the sum (r < output_rows && c < output_cols); then two loops over i < kernel_rows and j < kernel_cols add input(r + i, c + j) * kernel[i * kernel_cols + j] into one register, stored once.",
        ],
        budget: None,
        tolerance: TOLERANCE,
        cases: |scale: Scale| cases::cases(BLOCKS, FULL, 90, scale),
        shrink: Some(cases::shrink),
        declared_launch: None,
        fresh: Some(|seed, scale| cases::fresh(BLOCKS, FULL, 90, seed, scale)),
        draw: None,
    }
}

#[cfg(test)]
mod tests;
