//! How each puzzle of the valid contract launches a case: its [`Layout`].
//!
//! The five puzzles compute the same function on the same cases; they differ in launch shape, in
//! the macros the runner defines, and in whether the runner fills `__constant__ float
//! c_kernel[2048]` first. A [`Plan`] maps a case's block-size hint to a layout, so that one case
//! list ([`crate::cases`]) serves all five. Invariant: every layout's grid covers every output.

use spec::DeclaredLaunch;
use spec::job::{ConstUpload, Launch};

/// The `__constant__` array puzzles 05 and 06 read the taps from.
pub const CONSTANT_SYMBOL: &str = "c_kernel";
/// The array the puzzle-08 kernel declares its launch in.
pub const SHAPE_SYMBOL: &str = "launch_shape";

/// One puzzle's launch rule for one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Puzzles 04 and 05: `ceil(outputs / TPB)` blocks of TPB threads, one output per thread, and
    /// `TPB + kernel_size - 1` floats of dynamic shared memory; `constant` fills `c_kernel`.
    Tile { tpb: u32, constant: bool },
    /// Puzzle 06: blocks of TPB threads computing OUTPUTS_PER_THREAD outputs each, so
    /// `ceil(outputs / (TPB * OUTPUTS_PER_THREAD))` blocks and `TPB * OUTPUTS_PER_THREAD +
    /// kernel_size - 1` floats of dynamic shared memory; `c_kernel` filled.
    Registers { tpb: u32, per_thread: u32 },
    /// Puzzle 07: `ceil(outputs / BLOCK_SIZE)` blocks (Triton's programs) of THREADS threads,
    /// walking the kernel K_BLOCK taps at a time; no shared memory.
    Broadcast {
        block_size: u32,
        k_block: u32,
        threads: u32,
    },
    /// Puzzle 08: the kernel file declares the launch; cases carry a placeholder until the
    /// runner resolves it ([`spec::Puzzle::resolve_launch`]).
    Declared,
}

impl Layout {
    pub fn launch(&self, outputs: usize, kernel_size: usize) -> Launch {
        let blocks = |per_block: u32| outputs.div_ceil(per_block as usize).max(1) as u32;
        let floats = |n: usize| (n * 4) as u32;
        match *self {
            Layout::Tile { tpb, .. } => {
                Launch::linear(blocks(tpb), tpb).with_shared(floats(tpb as usize + kernel_size - 1))
            }
            Layout::Registers { tpb, per_thread } => {
                let per_block = tpb * per_thread;
                Launch::linear(blocks(per_block), tpb)
                    .with_shared(floats(per_block as usize + kernel_size - 1))
            }
            Layout::Broadcast {
                block_size,
                threads,
                ..
            } => Launch::linear(blocks(block_size), threads),
            Layout::Declared => DeclaredLaunch::PLACEHOLDER,
        }
    }

    /// The macros defined when compiling the kernel for this layout.
    pub fn macros(&self) -> Vec<(String, String)> {
        let pairs: Vec<(&str, u32)> = match *self {
            Layout::Tile { tpb, .. } => vec![("TPB", tpb)],
            Layout::Registers { tpb, per_thread } => {
                vec![("TPB", tpb), ("OUTPUTS_PER_THREAD", per_thread)]
            }
            Layout::Broadcast {
                block_size,
                k_block,
                threads,
            } => {
                vec![
                    ("BLOCK_SIZE", block_size),
                    ("K_BLOCK", k_block),
                    ("THREADS", threads),
                ]
            }
            Layout::Declared => vec![],
        };
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The `__constant__` uploads the runner makes before the launch.
    pub fn constants(&self, kernel: &[f32]) -> Vec<ConstUpload> {
        match self {
            Layout::Tile { constant: true, .. } | Layout::Registers { .. } => {
                vec![ConstUpload {
                    symbol: CONSTANT_SYMBOL.into(),
                    data: kernel.to_vec(),
                }]
            }
            _ => vec![],
        }
    }

    /// The layout a case was built with, read back from its macros and uploads (for shrinking).
    pub fn of(case: &spec::Case) -> Layout {
        let get = |name: &str| {
            case.macros
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.parse().ok())
        };
        match (
            get("TPB"),
            get("OUTPUTS_PER_THREAD"),
            get("BLOCK_SIZE"),
            get("K_BLOCK"),
            get("THREADS"),
        ) {
            (Some(tpb), Some(per_thread), ..) => Layout::Registers { tpb, per_thread },
            (Some(tpb), None, ..) => Layout::Tile {
                tpb,
                constant: !case.job.constants.is_empty(),
            },
            (_, _, Some(block_size), Some(k_block), Some(threads)) => Layout::Broadcast {
                block_size,
                k_block,
                threads,
            },
            _ => Layout::Declared,
        }
    }
}

/// A puzzle's layouts: `small` maps a case's block-size hint (8, 32 or 128 threads) to a
/// layout for the simulator-sized cases, `full` is the layout of the full-scale case.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub small: fn(u32) -> Layout,
    pub full: Layout,
}
