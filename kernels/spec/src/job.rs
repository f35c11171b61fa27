//! What a backend is asked to run, and what it gives back.
//!
//! A [`Job`] is one launch of one kernel: its launch shape, its arguments in parameter order,
//! the `__constant__` symbols to fill first and the tensor maps to write. Both backends (the GPU
//! through cudarc, the PTX simulator) take the same job and return the same [`RunOutput`], so the runner compares them
//! without knowing which ran. Output buffers are given by length only: the backend poisons them
//! with NaN before the launch, so an element nobody wrote can never pass as a lucky zero.
//! Jobs travel to the GPU worker process as JSON, hence the serde derives. A pitched 2D output
//! ([`Arg::Pitched`]) starts with a sentinel in its padding instead, which must survive the launch.

use crate::diag::Diagnostic;
use serde::{Deserialize, Serialize};

/// Grid and block shape, and the bytes of dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
}

impl Launch {
    /// A 1D launch of `blocks` blocks of `threads` threads.
    pub fn linear(blocks: u32, threads: u32) -> Self {
        Launch {
            grid: [blocks, 1, 1],
            block: [threads, 1, 1],
            shared_bytes: 0,
        }
    }

    pub fn with_shared(mut self, bytes: u32) -> Self {
        self.shared_bytes = bytes;
        self
    }

    pub fn threads_per_block(&self) -> u32 {
        self.block.iter().product()
    }

    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| u64::from(g)).product()
    }
}

/// One kernel argument, in the order of the kernel's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arg {
    /// A device buffer the kernel reads, filled with `data`.
    Input { name: String, data: Vec<f32> },
    /// A device buffer the kernel writes: `len` floats, poisoned with NaN before the launch.
    Output { name: String, len: usize },
    /// A 32-bit integer passed by value.
    I32 { name: String, value: i32 },
    /// A pitched 2D output (puzzles 09 and 10): `rows` rows of `stride` floats, of which the first
    /// `cols` are the image (poisoned with NaN) and the rest padding, holding
    /// [`PADDING_SENTINEL`] before the launch and required to hold it after.
    Pitched {
        name: String,
        rows: usize,
        cols: usize,
        stride: usize,
    },
}

/// What a pitched output's padding holds before the launch: a finite value no sum of the cases'
/// data can produce by chance, so a padding element that changed is told apart from one left alone.
pub const PADDING_SENTINEL: f32 = -7777.0;

/// Rows, columns and row stride (in floats) of a pitched 2D buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pitch {
    pub rows: usize,
    pub cols: usize,
    pub stride: usize,
}

impl Pitch {
    /// Whether flat element `i` lies in a row's padding.
    pub fn is_padding(&self, i: usize) -> bool {
        i % self.stride >= self.cols
    }

    /// (row, column) of flat element `i`.
    pub fn at(&self, i: usize) -> (usize, usize) {
        (i / self.stride, i % self.stride)
    }
}

impl Arg {
    pub fn name(&self) -> &str {
        match self {
            Arg::Input { name, .. }
            | Arg::Output { name, .. }
            | Arg::I32 { name, .. }
            | Arg::Pitched { name, .. } => name,
        }
    }

    /// For an output buffer, its contents before the launch: NaN everywhere, except a pitched
    /// output's padding, which holds [`PADDING_SENTINEL`]. `None` for inputs and integers.
    pub fn output_init(&self) -> Option<Vec<f32>> {
        match self {
            Arg::Output { len, .. } => Some(vec![f32::NAN; *len]),
            Arg::Pitched {
                rows, cols, stride, ..
            } => Some(
                (0..rows * stride)
                    .map(|i| {
                        if i % stride >= *cols {
                            PADDING_SENTINEL
                        } else {
                            f32::NAN
                        }
                    })
                    .collect(),
            ),
            Arg::Input { .. } | Arg::I32 { .. } => None,
        }
    }

    /// Elements of an output buffer (padding included); `None` for inputs and integers.
    pub fn output_len(&self) -> Option<usize> {
        match self {
            Arg::Output { len, .. } => Some(*len),
            Arg::Pitched { rows, stride, .. } => Some(rows * stride),
            Arg::Input { .. } | Arg::I32 { .. } => None,
        }
    }

    /// The shape of a pitched output.
    pub fn pitch(&self) -> Option<Pitch> {
        match *self {
            Arg::Pitched {
                rows, cols, stride, ..
            } => Some(Pitch { rows, cols, stride }),
            _ => None,
        }
    }
}

/// Values copied into a `__constant__` array before the launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConstUpload {
    pub symbol: String,
    pub data: Vec<f32>,
}

/// What a kernel may spend, checked by the simulator, each in the units of the work its lesson
/// is about (so that a kernel passes or fails however its instructions are written): global
/// elements read and written per thread (puzzles 02 and 03), elements of the input read per
/// block (04 and 05, [`TileReads`]), shared elements read per product (06), reads of a staged
/// buffer (10), and products on the CUDA cores per output with the multiply-adds done on the
/// tensor cores (11 and 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    /// Global elements (4 bytes, or one narrower or wider scalar) a thread may read and write:
    /// a float4 is 4.
    pub reads: u32,
    pub writes: u32,
    /// Products on the CUDA cores per output, rounded up: each lane's multiply of any
    /// instruction and precision (`fma`, `mad`, `mul`; f16, bf16, f32, f64), once per element (a
    /// packed `f16x2` is 2).
    #[serde(default)]
    pub cuda_products_per_output: Option<u32>,
    /// The outputs that count for `cuda_products_per_output`: the problem's (never the blocks' a
    /// declared launch runs, which a larger tile would inflate); 0: the output buffers' length.
    #[serde(default)]
    pub outputs: u64,
    /// Multiply-adds the tensor cores must do at least (the convolution's; 0: no such check):
    /// `mma.sync`, `wmma.mma` and `wgmma` instructions, each counted as its shape's M*N*K.
    #[serde(default)]
    pub tensor_macs: u64,
    /// Shared-memory elements the launch may read per product on the CUDA cores (each lane's
    /// multiply, of any instruction and precision), as a ratio `(reads, products)`:
    /// `reads * products_made <= products * reads_made` (puzzle 06's register window).
    #[serde(default)]
    pub shared_reads_per_product: Option<(u32, u32)>,
    /// Reads of one buffer the launch may make, `(buffer, num, den)`: `num / den` per float of
    /// the dynamic shared memory of the blocks it runs (puzzle 10's staged region).
    #[serde(default)]
    pub staged_reads: Option<(u32, u32, u32)>,
    /// The floats of the blocks' staged regions inside the input, for `staged_reads` in place of
    /// their dynamic shared memory (set with the declared launch, so that a tile larger than the
    /// image does not raise the allowance); 0: the shared memory.
    #[serde(default)]
    pub staged_region: u64,
    /// Elements of one buffer each block may read (puzzles 04 and 05's tile).
    #[serde(default)]
    pub tile_reads: Option<TileReads>,
}

/// The tile of puzzles 04 and 05: each block reads its tile and halo of `buf` once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileReads {
    /// The buffer (0-based argument) whose elements are counted per block: the input.
    pub buf: u32,
    /// The block's tile and halo, in elements (`TPB + kernel_size - 1`).
    pub tile: u32,
    /// Elements past the tile a block may read: a vector load's alignment at either end.
    pub slack: u32,
    /// A buffer no thread may read at all (puzzle 05's `kernel`, copied into `c_kernel`).
    pub unread: Option<u32>,
}

/// The budget of the tensor-core puzzles (11 and 12): 8 products per output on the CUDA cores,
/// what an epilogue needs (a scale, or a K remainder of fewer than 8 done in FP32), where a
/// kernel that does the convolution there makes one per term (`kernel_size` or `KR * KC * IC`
/// per output), whatever the instruction or precision; and the convolution's multiply-adds done
/// on the tensor cores (set per case by [`Job::tensor_core_budget`]).
pub const TENSOR_CORE_BUDGET: Budget = Budget::cuda_products(8);

impl Job {
    /// Sets the tensor-core budget on this job of `k` multiply-adds per output, counted over its
    /// `work / k` outputs (the problem's: a declared launch's larger blocks do not change it),
    /// and the `work` multiply-adds the tensor cores must do.
    pub fn tensor_core_budget(&mut self, k: u64) {
        self.budget = Some(Budget {
            outputs: self.work / k.max(1),
            tensor_macs: self.work,
            ..TENSOR_CORE_BUDGET
        });
    }
}

impl Budget {
    /// A per-thread count that is not limited.
    pub const NO_LIMIT: u32 = u32::MAX;

    /// Nothing limited.
    pub const NONE: Budget = Budget {
        reads: Self::NO_LIMIT,
        writes: Self::NO_LIMIT,
        cuda_products_per_output: None,
        outputs: 0,
        tensor_macs: 0,
        shared_reads_per_product: None,
        staged_reads: None,
        staged_region: 0,
        tile_reads: None,
    };

    /// Only products on the CUDA cores limited, to `limit` per output.
    pub const fn cuda_products(limit: u32) -> Self {
        Budget {
            cuda_products_per_output: Some(limit),
            ..Self::NONE
        }
    }
}

/// Bytes of a tensor map's element (f32).
pub const ELEM_BYTES: u64 = 4;

/// A tensor map the kernel declares, resolved for one case (by `tensor_maps`, which also checks
/// it): what `cuTensorMapEncodeTiled` takes, with f32 elements. A map without dims is one the
/// kernel declares for other cases (its `when` fails here): the backends zero its global.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorMap {
    pub symbol: String,
    /// The argument (index into [`Job::args`]) whose device address the map starts at.
    pub arg: usize,
    /// Elements in each dimension, dimension 0 innermost.
    pub dims: Vec<u64>,
    /// Bytes from one index to the next in dimensions 1.. (one fewer than `dims`).
    pub strides: Vec<u64>,
    pub boxes: Vec<u32>,
    /// Bytes of the swizzle span: 0 (none), 32, 64 or 128.
    pub swizzle: u32,
}

/// One launch of one kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The entry point, as it appears in the PTX (`extern "C"`, so unmangled).
    pub kernel: String,
    pub launch: Launch,
    pub args: Vec<Arg>,
    pub constants: Vec<ConstUpload>,
    /// The tensor maps the kernel declares (see `tensor_maps`), resolved for this case: each
    /// backend writes them into their globals before the launch.
    #[serde(default)]
    pub tensor_maps: Vec<TensorMap>,
    /// Per-thread global access budget, checked by the simulator.
    pub budget: Option<Budget>,
    /// Multiply-adds the case needs (for a declared launch shape, those of the whole blocks it
    /// runs); the simulator scales its instruction budget from it.
    pub work: u64,
}

impl Job {
    /// The output buffers' names in parameter order, matching [`RunOutput::outputs`].
    pub fn output_names(&self) -> impl Iterator<Item = &str> {
        self.args
            .iter()
            .filter(|a| a.output_len().is_some())
            .map(Arg::name)
    }

    /// The shape of the first output, when it is a pitched 2D one.
    pub fn output_pitch(&self) -> Option<Pitch> {
        self.args
            .iter()
            .find(|a| a.output_len().is_some())
            .and_then(Arg::pitch)
    }

    /// The value of the integer parameter `name`, if there is one.
    pub fn scalar(&self, name: &str) -> Option<i32> {
        self.args.iter().find_map(|a| match a {
            Arg::I32 { name: n, value } if n == name => Some(*value),
            _ => None,
        })
    }
}

/// Highest global access counts seen in any one thread, and the budgets' other counts
/// (`runner check --stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessStats {
    pub max_reads: u32,
    pub max_writes: u32,
    /// Products on the CUDA cores per output, rounded up, where the budget limits them.
    #[serde(default)]
    pub cuda_products_per_output: Option<u32>,
    /// The multiply-adds the tensor cores did and those the convolution needs, where the budget
    /// asks for them.
    #[serde(default)]
    pub tensor_macs: Option<(u64, u64)>,
    /// The launch's shared-memory reads and products on the CUDA cores, where the budget limits
    /// them.
    #[serde(default)]
    pub shared_reads_products: Option<(u64, u64)>,
    /// The staged buffer's reads, the floats its budget allows, and the outputs, where a budget
    /// limits them.
    #[serde(default)]
    pub staged_reads: Option<(u64, u64, u64)>,
    /// The most elements of the tiled buffer any one block read, and the tile, where a budget
    /// limits them.
    #[serde(default)]
    pub tile_reads: Option<(u64, u64)>,
    /// Reads of the buffer no thread may read (puzzle 05's `kernel`), where a budget names one.
    #[serde(default)]
    pub unread_reads: Option<u64>,
}

/// What a backend gives back for one job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOutput {
    /// The output buffers after the launch, one per [`Arg::Output`], in parameter order.
    /// Empty when the launch did not complete.
    pub outputs: Vec<Vec<f32>>,
    pub diagnostics: Vec<Diagnostic>,
    /// Wall time of the launch itself (device events on the GPU).
    pub seconds: f64,
    /// Thread-instructions executed (simulator only).
    pub instructions: Option<u64>,
    /// Per-thread global access maxima (simulator only).
    pub stats: Option<AccessStats>,
    /// What the kernel's `printf` calls printed, in order, up to [`PRINTED_MAX`] entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub printed: Vec<Printed>,
    /// Entries printed past [`PRINTED_MAX`], counted but not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub printed_more: u64,
    /// The run ended its backend's context (on the GPU: an illegal address, a trap or a stack
    /// overflow left the CUDA context unusable, or the worker died or was stopped), so a further
    /// case would need a fresh one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context_lost: bool,
}

/// Entries of [`RunOutput::printed`] kept per run: enough to debug with, bounded when every thread
/// of a large case prints.
pub const PRINTED_MAX: usize = 200;

/// Characters kept of one entry's text.
pub const PRINTED_CHARS: usize = 2000;

/// For `skip_serializing_if`: a count of nothing is left out.
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Text one `printf` call printed. The simulator knows the thread that printed it; on a GPU the
/// driver hands back the text alone, one entry per line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Printed {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<[u32; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<[u32; 3]>,
    pub text: String,
}

impl RunOutput {
    /// A run that did not happen, for the reason `d` gives.
    pub fn failed(d: Diagnostic) -> RunOutput {
        RunOutput {
            diagnostics: vec![d],
            ..RunOutput::default()
        }
    }

    /// True once [`PRINTED_MAX`] entries are kept: what is printed next is only counted.
    pub fn printed_full(&self) -> bool {
        self.printed.len() >= PRINTED_MAX
    }

    /// Keeps `p` unless [`RunOutput::printed_full`], else counts it.
    pub fn print(&mut self, mut p: Printed) {
        if !self.printed_full() {
            if let Some((cut, _)) = p.text.char_indices().nth(PRINTED_CHARS) {
                p.text.truncate(cut);
                p.text.push_str("...");
            }
            self.printed.push(p);
        } else {
            self.printed_more += 1;
        }
    }
}
