//! The launch shape a puzzle-11 kernel declares: `extern "C" __device__ const int
//! launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};`.
//!
//! Puzzle 11 computes `output[M, OC] = im2col(input)[M, K] x weight[K, OC]` with M = batch *
//! output_rows * output_cols. A block of THREADS threads owns a BLOCK_M x BLOCK_N tile of that
//! product, so the grid is ceil(M / BLOCK_M) x ceil(output_channels / BLOCK_N) blocks (x walks
//! M, y the output channels), each with SHARED_BYTES of dynamic shared memory (the GPU backend
//! opts in above 48 KiB). The array is read with [`crate::shape::declared_ints`]; what no GPU can
//! launch (no threads or more than 1024, an empty tile, more than 227 KiB of shared memory, a
//! grid past its limits for a case) is a `bad_launch_shape` diagnostic.

use crate::diag::Diagnostic;
use crate::job::{Job, Launch};
use crate::shape::{
    MAX_GRID_X, MAX_GRID_Y, MAX_SHARED_BYTES, MAX_THREADS, Unlaunchable, braces, declared_array,
    impossible, refused,
};

/// Threads, tile and shared bytes of an implicit-GEMM declared launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmShape {
    pub threads: u32,
    pub block_m: u32,
    pub block_n: u32,
    pub shared_bytes: u32,
}

impl GemmShape {
    pub const FIELDS: [&'static str; 4] = ["THREADS", "BLOCK_M", "BLOCK_N", "SHARED_BYTES"];

    /// Reads and checks the array `symbol` from `ptx` (compiled from `file`).
    pub fn from_ptx(ptx: &str, symbol: &str, file: &str) -> Result<Self, Diagnostic> {
        let words = declared_array(ptx, symbol, &Self::FIELDS, file)?;
        let [threads, block_m, block_n, shared_bytes] = words;
        let shape = GemmShape {
            threads,
            block_m,
            block_n,
            shared_bytes,
        };
        shape
            .check()
            .map_err(|why| refused(file, symbol, &words, &why))
    }

    /// Outputs a block owns.
    pub fn tile(&self) -> u64 {
        u64::from(self.block_m) * u64::from(self.block_n)
    }

    /// Checks what does not depend on the case.
    pub fn check(self) -> Result<Self, Unlaunchable> {
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(Unlaunchable::GemmThreads(self.threads));
        }
        if self.block_m == 0 || self.block_n == 0 {
            return Err(Unlaunchable::EmptyGemmTile);
        }
        if self.shared_bytes > MAX_SHARED_BYTES {
            return Err(Unlaunchable::TooMuchShared(self.shared_bytes));
        }
        Ok(self)
    }

    /// The launch for `job` (a puzzle-11 case: `batch`, `input_rows`, `input_cols`,
    /// `output_channels`, `kernel_rows`, `kernel_cols`), or why it cannot be launched.
    /// Diagnostics are placed at `file`.
    pub fn launch(&self, job: &Job, file: &str) -> Result<Launch, Diagnostic> {
        let get = |name: &str| job.scalar(name).unwrap_or(1).max(1) as u64;
        let out_rows = (get("input_rows") + 1)
            .saturating_sub(get("kernel_rows"))
            .max(1);
        let out_cols = (get("input_cols") + 1)
            .saturating_sub(get("kernel_cols"))
            .max(1);
        let m = get("batch") * out_rows * out_cols;
        let oc = get("output_channels");
        let (grid_x, grid_y) = (
            m.div_ceil(u64::from(self.block_m)),
            oc.div_ceil(u64::from(self.block_n)),
        );
        if grid_x > MAX_GRID_X || grid_y > MAX_GRID_Y {
            let msg = format!(
                "`launch_shape` = {}: M = {m} and {oc} output channels need {grid_x} x {grid_y} blocks, more than a grid can have ({MAX_GRID_X} x {MAX_GRID_Y}); choose a larger tile",
                braces(&[self.threads, self.block_m, self.block_n, self.shared_bytes])
            );
            return Err(impossible(file, msg));
        }
        Ok(Launch {
            grid: [grid_x as u32, grid_y as u32, 1],
            block: [self.threads, 1, 1],
            shared_bytes: self.shared_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Kind;
    use crate::job::Arg;

    fn job(batch: i32, rows: i32, cols: i32, oc: i32, k: i32) -> Job {
        let int = |name: &str, value| Arg::I32 {
            name: name.into(),
            value,
        };
        Job {
            kernel: "conv2d_nhwc".into(),
            launch: Launch::linear(0, 0),
            args: vec![
                int("batch", batch),
                int("input_rows", rows),
                int("input_cols", cols),
                int("input_channels", 64),
                int("output_channels", oc),
                int("kernel_rows", k),
                int("kernel_cols", k),
            ],
            constants: vec![],
            tensor_maps: vec![],
            budget: None,
            work: 0,
        }
    }

    #[test]
    fn reads_nvrtc_bytes_and_launches_one_block_per_tile_of_the_product() {
        // NVRTC 13.0 for {128, 128, 64, 65536}: 65536 is 0, 0, 1, 0.
        let ptx = ".global .align 4 .b8 launch_shape[16] = {128, 0, 0, 0, 128, 0, 0, 0, 64, 0, 0, 0, 0, 0, 1};";
        let shape = GemmShape::from_ptx(ptx, "launch_shape", "k.cu").unwrap();
        assert_eq!(
            shape,
            GemmShape {
                threads: 128,
                block_m: 128,
                block_n: 64,
                shared_bytes: 65536
            }
        );
        // N16 64x64 3x3 OC128: M = 16 * 62 * 62 = 61504 -> 481 tiles of 128 (a tail of 64).
        let l = shape.launch(&job(16, 64, 64, 128, 3), "k.cu").unwrap();
        assert_eq!(l.grid, [481, 2, 1]);
        assert_eq!((l.block, l.shared_bytes), ([128, 1, 1], 65536));
        // Odd output channels: a tail in N too.
        let l = shape.launch(&job(2, 9, 7, 5, 3), "k.cu").unwrap();
        assert_eq!(l.grid, [1, 1, 1]);
        let l = shape.launch(&job(1, 20, 20, 130, 1), "k.cu").unwrap();
        assert_eq!(l.grid, [4, 3, 1]);
    }

    #[test]
    fn missing_zero_and_too_large_shapes_are_bad_launch_shapes() {
        let d = GemmShape::from_ptx(".visible .entry conv2d_nhwc(", "launch_shape", "k.cu")
            .unwrap_err();
        assert_eq!(
            (d.kind, d.file.as_deref(), d.line),
            (Kind::BadLaunchShape, Some("k.cu"), Some(1))
        );
        assert!(
            d.message
                .contains("launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES}"),
            "{}",
            d.message
        );
        let three = ".global .align 4 .u32 launch_shape[3] = {128, 64, 64};";
        let d = GemmShape::from_ptx(three, "launch_shape", "k.cu").unwrap_err();
        assert!(d.message.contains("holds 3 ints, not 4"), "{}", d.message);
        for (words, why) in [
            ("{0, 64, 64, 0}", "THREADS is 0"),
            ("{2048, 64, 64, 0}", "THREADS is 2048"),
            ("{128, 0, 64, 0}", "BLOCK_M and BLOCK_N"),
            ("{128, 64, 0, 0}", "BLOCK_M and BLOCK_N"),
            ("{128, 64, 64, 300000}", "SHARED_BYTES = 300000"),
        ] {
            let ptx = format!(".global .align 4 .u32 launch_shape[4] = {words};");
            let d = GemmShape::from_ptx(&ptx, "launch_shape", "k.cu").unwrap_err();
            assert_eq!(d.kind, Kind::BadLaunchShape);
            assert!(d.message.contains(why), "{words}: {}", d.message);
        }
        let thin = GemmShape {
            threads: 32,
            block_m: 1,
            block_n: 1,
            shared_bytes: 0,
        };
        let d = thin.launch(&job(1, 8, 8, 70000, 1), "k.cu").unwrap_err();
        assert_eq!(d.kind, Kind::BadLaunchShape);
        assert!(d.message.contains("70000 blocks"), "{}", d.message);
    }
}
