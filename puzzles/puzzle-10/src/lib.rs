//! Puzzle 10: stage the tile once, then block in registers. Contract and cases: puzzle 09's.
//!
//! Puzzle 09's threads each read kernel_rows * kernel_cols inputs from global memory, and the
//! neighbours of a thread read almost the same ones: for a 32 x 32 tile and a 3 x 3 kernel, 9,216
//! loads of 1,156 distinct inputs. Here a block loads its (TILE_ROWS + kernel_rows - 1) x
//! (TILE_COLS + kernel_cols - 1) input region into shared memory once, then each thread computes
//! several outputs of a row from a register window.
//!
//! The learner chooses the launch. The kernel file declares `extern "C" __device__ const int
//! launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS};` and the runner, after compiling,
//! reads it from the PTX ([`spec::tile_shape`]) and launches ceil(output_cols / TILE_COLS) x
//! ceil(output_rows / TILE_ROWS) blocks of (BLOCK_X, BLOCK_Y) threads with 4 * (TILE_ROWS +
//! kernel_rows - 1) * (TILE_COLS + kernel_cols - 1) bytes of dynamic shared memory. Until then
//! the cases carry a placeholder launch of no blocks. No macros are defined.

use puzzle_09::cases::{self, Layout};
use spec::{Budget, DeclaredLaunch, LaunchRule, Puzzle, Scale};

/// The array the kernel declares its launch in.
pub const SHAPE_SYMBOL: &str = "launch_shape";

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-10",
        title: "Stage the tile once, then block in registers",
        grade: 4,
        kernel: "conv2d",
        params: puzzle_09::PARAMS,
        teaches: "load the (TILE_ROWS + KR - 1) x (TILE_COLS + KC - 1) input region into shared memory once, then several outputs per thread from a register window",
        hints: &[
            "Declare the launch first: extern \"C\" __device__ const int launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS}; and get a staged, one-output-per-thread kernel right before a fast one.",
            "The staged region is (TILE_ROWS + kernel_rows - 1) rows of (TILE_COLS + kernel_cols - 1) floats, in `extern __shared__ float tile[]`: load it with a loop over all of it (threads striding by BLOCK_X * BLOCK_Y), zero past the input's last row and column, then __syncthreads().",
            "The taps are the same for every thread: copy them to a static __shared__ array too, padded with zeros to a multiple of the outputs per thread.",
            "Each thread computes R neighbouring outputs of one row: for each kernel row, walk the taps R at a time with two register windows of R inputs each (lo and hi), so that every register index is a compile-time constant.",
        ],
        budget: None,
        tolerance: puzzle_09::TOLERANCE,
        cases: |scale: Scale| {
            staged(cases::cases(
                |_, _| Layout::Declared,
                Layout::Declared,
                100,
                scale,
            ))
        },
        shrink: Some(cases::shrink),
        declared_launch: Some(DeclaredLaunch {
            symbol: SHAPE_SYMBOL,
            rule: LaunchRule::Tiles2d,
        }),
        fresh: Some(|seed, scale| {
            let declared = |_, _| Layout::Declared;
            staged(cases::fresh(declared, Layout::Declared, 100, seed, scale))
        }),
        draw: None,
    }
}

/// `cases` with [`STAGED_BUDGET`].
fn staged(mut cases: Vec<spec::Case>) -> Vec<spec::Case> {
    for c in &mut cases {
        c.job.budget = Some(STAGED_BUDGET);
    }
    cases
}

/// Reads of `input` (buffer 0) a launch may make: the floats of the blocks' staged regions (the
/// dynamic shared memory the declared launch gives each block) and a quarter more, room for a
/// region loaded in overlapping pieces. A kernel that reads its window from `input` reads
/// `kernel_rows * kernel_cols` inputs per output.
pub const STAGED_BUDGET: Budget = Budget {
    staged_reads: Some((0, 5, 4)),
    ..Budget::NONE
};

#[cfg(test)]
mod tests {
    use super::*;

    /// NVRTC 13.0's PTX line for {32, 8, 32, 64} (trailing zero bytes left out).
    const PTX: &str =
        ".global .align 4 .b8 launch_shape[16] = {32, 0, 0, 0, 8, 0, 0, 0, 32, 0, 0, 0, 64};";

    #[test]
    fn the_declared_launch_covers_every_output_with_its_staged_region() {
        let mut cases = (spec().cases)(Scale::Small);
        assert!(
            cases
                .iter()
                .all(|c| c.job.launch == DeclaredLaunch::PLACEHOLDER)
        );
        spec().resolve_launch(PTX, "k.cu", &mut cases).unwrap();
        for c in &cases {
            let (l, p) = (c.job.launch, c.job.output_pitch().unwrap());
            let (kr, kc) = (
                c.job.scalar("kernel_rows").unwrap() as u32,
                c.job.scalar("kernel_cols").unwrap() as u32,
            );
            assert_eq!(l.block, [32, 8, 1], "{}", c.name);
            assert!((l.grid[0] * 64) as usize >= p.cols && (l.grid[1] * 32) as usize >= p.rows);
            assert_eq!(
                l.shared_bytes,
                4 * (32 + kr - 1) * (64 + kc - 1),
                "{}",
                c.name
            );
            assert!(c.macros.is_empty());
        }
    }

    #[test]
    fn the_staged_budget_counts_the_regions_inside_the_input_whatever_the_tile() {
        // {32, 8, 200, 200}: one block covers every small case, its region past the image.
        let giant =
            ".global .align 4 .b8 launch_shape[16] = {32, 0, 0, 0, 8, 0, 0, 0, 200, 0, 0, 0, 200};";
        let (mut small, mut large) = ((spec().cases)(Scale::Small), (spec().cases)(Scale::Small));
        spec().resolve_launch(PTX, "k.cu", &mut small).unwrap();
        spec().resolve_launch(giant, "k.cu", &mut large).unwrap();
        for (s, l) in small.iter().zip(&large) {
            let rows = s.job.scalar("input_rows").unwrap() as u64;
            let cols = s.job.scalar("input_cols").unwrap() as u64;
            let region = |c: &spec::Case| c.job.budget.unwrap().staged_region;
            assert_eq!(l.job.launch.blocks(), 1, "{}", l.name);
            assert_eq!(
                region(l),
                rows * cols,
                "{}: the image, not the tile",
                l.name
            );
            // Smaller tiles overlap by their halos: at least the image, never a block's
            // shared memory past it.
            assert!(region(s) >= rows * cols, "{}", s.name);
            let shared = u64::from(s.job.launch.shared_bytes / 4) * s.job.launch.blocks();
            assert!(region(s) <= shared, "{}", s.name);
        }
    }

    #[test]
    fn a_kernel_without_a_shape_is_told_what_to_declare() {
        let mut cases = (spec().cases)(Scale::Small);
        let d = spec()
            .resolve_launch(".visible .entry conv2d(", "kernel.cu", &mut cases)
            .unwrap_err();
        assert_eq!(d.kind, spec::Kind::BadLaunchShape);
        assert!(d.message.contains("launch_shape[4]"), "{}", d.message);
    }
}
