//! A launch shape that the kernel file declares for itself (puzzles 08, 10 and 11).
//!
//! Where a puzzle lets the learner choose the launch, the kernel file holds
//! `extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};`.
//! NVRTC keeps such an initialized array in the PTX even when no code reads it, as a
//! `.global` (or, for `__constant__`, `.const`) byte array in little-endian order, with trailing
//! zero bytes left out:
//!
//! ```text
//! .global .align 4 .b8 launch_shape[12] = {64, 0, 0, 0, 0, 3};
//! ```
//!
//! [`declared_ints`] reads such an array back through the simulator's PTX parser, so a missing,
//! misspelled or wrongly sized declaration is a `bad_launch_shape` diagnostic that says what to
//! write, never a launch of zero blocks. [`LaunchShape::from_ptx`] reads puzzle 08's three ints
//! and checks them against the hardware's limits; the grid then follows from the case: one block
//! per `OUTPUTS_PER_BLOCK` outputs, rounded up. Puzzle 10's 2D shape is in `crate::tile_shape`,
//! puzzle 11's implicit-GEMM tiles in `crate::gemm_shape`.

use crate::diag::{Diagnostic, Kind};
use crate::job::Launch;

/// Threads a block may have on every CUDA GPU.
pub const MAX_THREADS: u32 = 1024;
/// Blocks a grid may have along x and along y.
pub const MAX_GRID_X: u64 = (1 << 31) - 1;
pub const MAX_GRID_Y: u64 = 65_535;
/// Dynamic shared memory a block may ask for on sm_90 (227 KiB); the runner opts in past 48 KiB.
pub const MAX_SHARED_BYTES: u32 = 227 * 1024;

/// Why a declared launch shape is one no GPU launches, whatever the case (`LaunchShape`,
/// `TileShape` and `GemmShape`'s `check`); its text is the reason a `bad_launch_shape`
/// diagnostic gives.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unlaunchable {
    #[error("THREADS is 0; a block needs at least 1 thread")]
    NoThreads,
    #[error("THREADS = {0} is past the limit of {max} threads a block may have", max = MAX_THREADS)]
    TooManyThreads(u32),
    #[error("OUTPUTS_PER_BLOCK is 0; each block must compute at least 1 output")]
    NoOutputs,
    #[error(
        "SHARED_BYTES = {0} is past the limit of {max} bytes (227 KiB) of shared memory a block may have",
        max = MAX_SHARED_BYTES
    )]
    TooMuchShared(u32),
    /// Puzzle 11's `THREADS` out of range.
    #[error("THREADS is {0}; a block has 1 to {max} threads", max = MAX_THREADS)]
    GemmThreads(u32),
    #[error("BLOCK_M and BLOCK_N must be at least 1")]
    EmptyGemmTile,
    /// Puzzle 10's `BLOCK_X * BLOCK_Y` out of range.
    #[error("BLOCK_X * BLOCK_Y is {0} threads; a block has 1 to {max}", max = MAX_THREADS)]
    BlockThreads(u64),
    #[error("TILE_ROWS and TILE_COLS must be at least 1")]
    EmptyTile,
}

/// The launch a kernel declares: block size, outputs each block computes, dynamic shared bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub threads: u32,
    pub outputs_per_block: u32,
    pub shared_bytes: u32,
}

impl LaunchShape {
    /// Reads the array `symbol` from `ptx`. Diagnostics are placed at `file`, line 1 (the PTX of a
    /// global variable carries no line), and say what the declaration should look like.
    pub fn from_ptx(ptx: &str, symbol: &str, file: &str) -> Result<Self, Diagnostic> {
        let fields = ["THREADS", "OUTPUTS_PER_BLOCK", "SHARED_BYTES"];
        let words = declared_array(ptx, symbol, &fields, file)?;
        let [threads, outputs_per_block, shared_bytes] = words;
        let shape = LaunchShape {
            threads,
            outputs_per_block,
            shared_bytes,
        };
        shape
            .check()
            .map_err(|why| refused(file, symbol, &words, &why))
    }

    /// Checks the shape against what every sm_90 GPU can launch.
    pub fn check(self) -> Result<Self, Unlaunchable> {
        if self.threads == 0 {
            return Err(Unlaunchable::NoThreads);
        }
        if self.threads > MAX_THREADS {
            return Err(Unlaunchable::TooManyThreads(self.threads));
        }
        if self.outputs_per_block == 0 {
            return Err(Unlaunchable::NoOutputs);
        }
        if self.shared_bytes > MAX_SHARED_BYTES {
            return Err(Unlaunchable::TooMuchShared(self.shared_bytes));
        }
        Ok(self)
    }

    /// The launch for a case with `outputs` outputs: ceil(outputs / OUTPUTS_PER_BLOCK) blocks.
    pub fn launch(&self, outputs: usize) -> Launch {
        let blocks = outputs.div_ceil(self.outputs_per_block as usize).max(1);
        Launch::linear(blocks as u32, self.threads).with_shared(self.shared_bytes)
    }
}

/// A `bad_launch_shape` diagnostic at line 1 of `file`.
pub fn impossible(file: &str, message: String) -> Diagnostic {
    Diagnostic::new(Kind::BadLaunchShape, message).at_line(file, 1)
}

/// [`declared_ints`] for a fixed number of fields, as an array.
pub fn declared_array<const N: usize>(
    ptx: &str,
    symbol: &str,
    fields: &[&str; N],
    file: &str,
) -> Result<[u32; N], Diagnostic> {
    let words = declared_ints(ptx, symbol, fields, file)?;
    Ok(words
        .try_into()
        .expect("declared_ints returns one value per field"))
}

/// A `bad_launch_shape` for the declared `words` of `symbol`, saying `why` no GPU launches them.
pub fn refused(file: &str, symbol: &str, words: &[u32], why: &Unlaunchable) -> Diagnostic {
    impossible(file, format!("`{symbol}` = {}: {why}", braces(words)))
}

/// `{a, b, c}`: declared words as the source writes them.
pub fn braces(words: &[u32]) -> String {
    let words: Vec<String> = words.iter().map(u32::to_string).collect();
    format!("{{{}}}", words.join(", "))
}

/// The ints of the array `symbol` that `ptx` declares, one per name in `fields`; a missing,
/// uninitialized or wrongly sized array is a `bad_launch_shape` diagnostic that shows the
/// declaration to write.
pub fn declared_ints(
    ptx: &str,
    symbol: &str,
    fields: &[&str],
    file: &str,
) -> Result<Vec<u32>, Diagnostic> {
    let wanted = format!(
        "extern \"C\" __device__ const int {symbol}[{}] = {{{}}};",
        fields.len(),
        fields.join(", ")
    );
    let fail = |why: String| Err(impossible(file, format!("{why}: declare `{wanted}`")));
    let Some(array) = ptx::module_array(ptx, symbol) else {
        return fail(format!(
            "the kernel file does not declare its launch shape `{symbol}`"
        ));
    };
    if !array.initialized || !array.bytes.len().is_multiple_of(4) {
        return fail(format!(
            "`{symbol}` has no initializer of ints the runner can read"
        ));
    }
    let words: Vec<u32> = array
        .bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if words.len() != fields.len() {
        return fail(format!(
            "`{symbol}` holds {} ints, not {}",
            words.len(),
            fields.len()
        ));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVRTC 13.0's PTX for `extern "C" __device__ const int launch_shape[3] = {64, 768, 0};`
    /// (the kernel's body cut to `ret`).
    const NVRTC_PTX: &str = "\
.version 9.0
.target sm_90
.address_size 64
	// .globl	conv1d
.global .align 4 .b8 launch_shape[12] = {64, 0, 0, 0, 0, 3};
.visible .entry conv1d(
	.param .u64 conv1d_param_0
)
{
	ret;
}
";

    #[test]
    fn reads_nvrtc_byte_arrays_with_trailing_zeros_left_out() {
        let shape = LaunchShape::from_ptx(NVRTC_PTX, "launch_shape", "k.cu").unwrap();
        assert_eq!(
            shape,
            LaunchShape {
                threads: 64,
                outputs_per_block: 768,
                shared_bytes: 0
            }
        );
    }

    #[test]
    fn reads_constant_and_word_arrays() {
        // NVRTC's PTX for `{256, 5000, 70000}` as `__constant__`, and a hand-written word list.
        let bytes =
            ".const .align 4 .b8 launch_shape[12] = {0, 1, 0, 0, 136, 19, 0, 0, 112, 17, 1};";
        let shape = LaunchShape::from_ptx(bytes, "launch_shape", "k.cu").unwrap();
        assert_eq!(
            shape,
            LaunchShape {
                threads: 256,
                outputs_per_block: 5000,
                shared_bytes: 70000
            }
        );
        let words = ".visible .global .align 4 .u32 launch_shape[3] = {128, 4096, 16384};";
        let shape = LaunchShape::from_ptx(words, "launch_shape", "k.cu").unwrap();
        assert_eq!(
            shape,
            LaunchShape {
                threads: 128,
                outputs_per_block: 4096,
                shared_bytes: 16384
            }
        );
    }

    #[test]
    fn a_missing_declaration_says_what_to_write() {
        let d =
            LaunchShape::from_ptx(".visible .entry conv1d(", "launch_shape", "k.cu").unwrap_err();
        assert_eq!(
            (d.kind, d.file.as_deref(), d.line),
            (Kind::BadLaunchShape, Some("k.cu"), Some(1))
        );
        assert!(
            d.message
                .contains("extern \"C\" __device__ const int launch_shape[3]"),
            "{}",
            d.message
        );
        // A longer name that merely starts with the symbol is not the symbol.
        let other = ".global .align 4 .b8 launch_shape_old[12] = {64, 0, 0, 0, 0, 3};";
        assert!(LaunchShape::from_ptx(other, "launch_shape", "k.cu").is_err());
    }

    #[test]
    fn wrong_lengths_and_impossible_shapes_are_refused() {
        let two = ".global .align 4 .b8 launch_shape[8] = {1, 0, 0, 0, 2};";
        let d = LaunchShape::from_ptx(two, "launch_shape", "k.cu").unwrap_err();
        assert!(d.message.contains("holds 2 ints, not 3"), "{}", d.message);
        for (ptx, why) in [
            (
                ".global .align 4 .b8 launch_shape[12] = {0, 0, 0, 0, 1};",
                "THREADS",
            ),
            (
                ".global .align 4 .u32 launch_shape[3] = {2048, 1, 0};",
                "THREADS",
            ),
            (
                ".global .align 4 .u32 launch_shape[3] = {256, 0, 0};",
                "OUTPUTS_PER_BLOCK",
            ),
            (
                ".global .align 4 .u32 launch_shape[3] = {256, 1, 300000};",
                "SHARED_BYTES",
            ),
        ] {
            let d = LaunchShape::from_ptx(ptx, "launch_shape", "k.cu").unwrap_err();
            assert!(d.message.contains(why), "{ptx}: {}", d.message);
        }
        let uninitialized = ".global .align 4 .b8 launch_shape[12];";
        assert!(
            LaunchShape::from_ptx(uninitialized, "launch_shape", "k.cu")
                .unwrap_err()
                .message
                .contains("initializer")
        );
    }

    #[test]
    fn the_grid_covers_every_output() {
        let shape = LaunchShape {
            threads: 64,
            outputs_per_block: 768,
            shared_bytes: 4096,
        };
        assert_eq!(shape.launch(768).grid, [1, 1, 1]);
        assert_eq!(shape.launch(769).grid, [2, 1, 1]);
        let full = shape.launch(1_498_954);
        assert_eq!(
            (full.grid[0], full.block[0], full.shared_bytes),
            (1952, 64, 4096)
        );
    }
}
