//! The 2D launch shape a puzzle-10 kernel declares: `extern "C" __device__ const int
//! launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS};`.
//!
//! A block of BLOCK_X x BLOCK_Y threads computes a TILE_ROWS x TILE_COLS tile of the output, so the
//! grid is ceil(output_cols / TILE_COLS) x ceil(output_rows / TILE_ROWS) blocks (x walks the
//! columns), and each block gets `4 * (TILE_ROWS + kernel_rows - 1) * (TILE_COLS + kernel_cols - 1)`
//! bytes of dynamic shared memory: the staged input region of its tile. The array is read with
//! [`crate::shape::declared_ints`]; what no GPU can launch (no threads, more than 1024, an empty
//! tile, a staged region over 227 KiB for a case's kernel) is a `bad_launch_shape` diagnostic.

use crate::diag::Diagnostic;
use crate::job::{Job, Launch};
use crate::shape::{
    MAX_GRID_Y, MAX_SHARED_BYTES, MAX_THREADS, Unlaunchable, braces, declared_array, impossible,
    refused,
};

/// Block and tile of a 2D declared launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    pub block_x: u32,
    pub block_y: u32,
    pub tile_rows: u32,
    pub tile_cols: u32,
}

impl TileShape {
    pub const FIELDS: [&'static str; 4] = ["BLOCK_X", "BLOCK_Y", "TILE_ROWS", "TILE_COLS"];

    /// Reads and checks the array `symbol` from `ptx` (compiled from `file`).
    pub fn from_ptx(ptx: &str, symbol: &str, file: &str) -> Result<Self, Diagnostic> {
        let words = declared_array(ptx, symbol, &Self::FIELDS, file)?;
        let [block_x, block_y, tile_rows, tile_cols] = words;
        let shape = TileShape {
            block_x,
            block_y,
            tile_rows,
            tile_cols,
        };
        shape
            .check()
            .map_err(|why| refused(file, symbol, &words, &why))
    }

    fn braces(&self) -> String {
        braces(&[self.block_x, self.block_y, self.tile_rows, self.tile_cols])
    }

    /// Checks what does not depend on the case.
    pub fn check(self) -> Result<Self, Unlaunchable> {
        let threads = u64::from(self.block_x) * u64::from(self.block_y);
        if threads == 0 || threads > u64::from(MAX_THREADS) {
            return Err(Unlaunchable::BlockThreads(threads));
        }
        if self.tile_rows == 0 || self.tile_cols == 0 {
            return Err(Unlaunchable::EmptyTile);
        }
        Ok(self)
    }

    /// The launch for `job` (a 2D case: `input_rows`, `input_cols`, `kernel_rows`, `kernel_cols`),
    /// or why it cannot be launched. Diagnostics are placed at `file`.
    /// The floats of the blocks' staged regions that lie inside `job`'s input, summed over the
    /// blocks the launch runs: what a kernel staging each region once reads (a region past the
    /// input's last row or column is zeros, not reads). The staged-reads budget of puzzle 10
    /// counts from it, so that a tile larger than the image does not raise what it allows.
    pub fn staged_inside(&self, job: &Job) -> u64 {
        let get = |name: &str| job.scalar(name).unwrap_or(1).max(1) as u64;
        let (kr, kc) = (get("kernel_rows"), get("kernel_cols"));
        let (rows, cols) = (get("input_rows"), get("input_cols"));
        let (tr, tc) = (
            u64::from(self.tile_rows).max(1),
            u64::from(self.tile_cols).max(1),
        );
        // Separable: the region of block (bx, by) is its rows times its columns.
        let along = |len: u64, tile: u64, k: u64| {
            let out = (len + 1).saturating_sub(k).max(1);
            (0..out.div_ceil(tile))
                .map(|b| (tile + k - 1).min(len.saturating_sub(b * tile)))
                .sum::<u64>()
        };
        along(rows, tr, kr) * along(cols, tc, kc)
    }

    pub fn launch(&self, job: &Job, file: &str) -> Result<Launch, Diagnostic> {
        let get = |name: &str| job.scalar(name).unwrap_or(1).max(1) as u64;
        let (kr, kc) = (get("kernel_rows"), get("kernel_cols"));
        let out_rows = (get("input_rows") + 1).saturating_sub(kr).max(1);
        let out_cols = (get("input_cols") + 1).saturating_sub(kc).max(1);
        let (tr, tc) = (u64::from(self.tile_rows), u64::from(self.tile_cols));
        let bytes = 4 * (tr + kr - 1) * (tc + kc - 1);
        if bytes > u64::from(MAX_SHARED_BYTES) {
            let msg = format!(
                "`launch_shape` = {}: with a {kr} x {kc} kernel the staged region is {} x {} floats, {bytes} bytes of shared memory, more than the {MAX_SHARED_BYTES} (227 KiB) a block can have; choose a smaller tile",
                self.braces(),
                tr + kr - 1,
                tc + kc - 1
            );
            return Err(impossible(file, msg));
        }
        let grid_y = out_rows.div_ceil(tr);
        if grid_y > MAX_GRID_Y {
            let msg = format!(
                "`launch_shape` = {}: {out_rows} output rows in tiles of {tr} rows need {grid_y} blocks along y, more than the {MAX_GRID_Y} a grid can have; choose a taller tile",
                self.braces()
            );
            return Err(impossible(file, msg));
        }
        Ok(Launch {
            grid: [out_cols.div_ceil(tc) as u32, grid_y as u32, 1],
            block: [self.block_x, self.block_y, 1],
            shared_bytes: bytes as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Kind;
    use crate::job::Arg;

    fn job(rows: i32, cols: i32, kr: i32, kc: i32) -> Job {
        let int = |name: &str, value| Arg::I32 {
            name: name.into(),
            value,
        };
        Job {
            kernel: "conv2d".into(),
            launch: Launch::linear(0, 0),
            args: vec![
                int("input_rows", rows),
                int("input_cols", cols),
                int("kernel_rows", kr),
                int("kernel_cols", kc),
            ],
            constants: vec![],
            tensor_maps: vec![],
            budget: None,
            work: 0,
        }
    }

    #[test]
    fn reads_nvrtc_bytes_and_launches_one_block_per_tile() {
        // NVRTC 13.0 for {32, 8, 32, 64}: 32, 0, 0, 0, 8, 0, 0, 0, 32, 0, 0, 0, 64.
        let ptx =
            ".global .align 4 .b8 launch_shape[16] = {32, 0, 0, 0, 8, 0, 0, 0, 32, 0, 0, 0, 64};";
        let shape = TileShape::from_ptx(ptx, "launch_shape", "k.cu").unwrap();
        assert_eq!(
            shape,
            TileShape {
                block_x: 32,
                block_y: 8,
                tile_rows: 32,
                tile_cols: 64
            }
        );
        // 4096 x 4096 with 3 x 3: 4094 x 4094 outputs, 64 x 128 tiles, (32 + 2) x (64 + 2) staged.
        let l = shape.launch(&job(4096, 4096, 3, 3), "k.cu").unwrap();
        assert_eq!(l.grid, [64, 128, 1]);
        assert_eq!(l.block, [32, 8, 1]);
        assert_eq!(l.shared_bytes, 4 * 34 * 66);
        // A tail in both directions: 70 x 45 outputs from 72 x 49 with a 3 x 5 kernel.
        let l = shape.launch(&job(72, 49, 3, 5), "k.cu").unwrap();
        assert_eq!(l.grid, [1, 3, 1]);
    }

    #[test]
    fn missing_and_impossible_shapes_are_bad_launch_shapes() {
        let d = TileShape::from_ptx(".visible .entry conv2d(", "launch_shape", "k.cu").unwrap_err();
        assert_eq!(d.kind, Kind::BadLaunchShape);
        assert!(
            d.message
                .contains("launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS}")
        );
        let three = ".global .align 4 .u32 launch_shape[3] = {32, 8, 32};";
        let d = TileShape::from_ptx(three, "launch_shape", "k.cu").unwrap_err();
        assert!(d.message.contains("holds 3 ints, not 4"), "{}", d.message);
        for (words, why) in [
            ("{0, 8, 32, 32}", "BLOCK_X * BLOCK_Y is 0"),
            ("{64, 32, 32, 32}", "2048 threads"),
            ("{32, 8, 0, 32}", "TILE_ROWS"),
        ] {
            let ptx = format!(".global .align 4 .u32 launch_shape[4] = {words};");
            let d = TileShape::from_ptx(&ptx, "launch_shape", "k.cu").unwrap_err();
            assert_eq!(d.kind, Kind::BadLaunchShape);
            assert!(d.message.contains(why), "{words}: {}", d.message);
        }
        let huge = TileShape {
            block_x: 32,
            block_y: 8,
            tile_rows: 256,
            tile_cols: 256,
        };
        let d = huge.launch(&job(4096, 4096, 15, 15), "k.cu").unwrap_err();
        assert_eq!((d.kind, d.line), (Kind::BadLaunchShape, Some(1)));
        assert!(d.message.contains("270 x 270 floats"), "{}", d.message);
        assert!(huge.launch(&job(300, 300, 1, 1), "k.cu").is_err());
        let flat = TileShape {
            tile_rows: 1,
            ..huge
        };
        assert!(flat.launch(&job(8192 * 9, 300, 1, 1), "k.cu").is_err());
    }
}
