//! The access budgets of one launch, counted as work (`spec::job::Budget`): one counter per
//! idea, each owning its update (called from the checks of `check` and `check_global`, or from
//! the executor for products) and its reading against the budget, which fills its line of
//! [`AccessStats`] and returns the [`Finding`] to report when the count is past what the puzzle
//! allows. A counter whose budget the job does not set counts nothing.
//!
//! - [`PerThread`]: each thread's global reads and writes (every puzzle).
//! - [`Products`]: products on the CUDA cores per output, and the multiply-adds the tensor cores
//!   did (puzzles 06, 11 and 12).
//! - [`SharedReads`]: shared-memory reads per product (puzzle 06's register window).
//! - [`Staged`]: reads of one buffer against the blocks' staged regions (puzzle 10).
//! - [`Tile`]: each block's reads of its tile, and the buffer no thread may read (04 and 05).

use crate::finding::{Access, Finding};
use ptx::ir::Op;
use ptx::ir::{Bin, Tern, Ty};
use ptx::ir::{HalfOp, MmaOp};
use spec::job::{AccessStats, Budget};

/// The products one lane of `op` makes on the CUDA cores: 1 for a multiply or multiply-add of
/// any floating-point precision (`mul`, `fma`, `mad`; f16, bf16, f32, f64), 2 for a packed pair;
/// `None` for anything else (an add is no product: a tf32 split's subtract or an epilogue's sum).
pub(super) fn cuda_core_products(op: &Op) -> Option<u32> {
    let float = |ty: Ty| matches!(ty, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64);
    let n = |ty: Ty| if ty == Ty::F16x2 { 2 } else { 1 };
    match op {
        Op::Bin {
            op: Bin::MulLo, ty, ..
        }
        | Op::Tern {
            op: Tern::Fma, ty, ..
        } if float(*ty) || *ty == Ty::F16x2 => Some(n(*ty)),
        Op::Mma(m) => match **m {
            MmaOp::Half {
                op: HalfOp::Mul | HalfOp::Fma,
                x2,
                ..
            } => Some(if x2 { 2 } else { 1 }),
            _ => None,
        },
        _ => None,
    }
}

/// The outputs a per-output budget divides by: the problem's where the budget names them, else
/// the output buffers' elements (`elems`).
fn problem_outputs(b: &Budget, elems: u64) -> u64 {
    match b.outputs {
        0 => elems,
        n => n,
    }
}

/// Each thread's global reads and writes in the current block (`Budget::reads`, `writes`).
pub(super) struct PerThread {
    reads: Vec<u32>,
    writes: Vec<u32>,
}

impl PerThread {
    pub(super) fn new(tpb: u32) -> Self {
        PerThread {
            reads: vec![0; tpb as usize],
            writes: vec![0; tpb as usize],
        }
    }

    /// Thread `t` read (`write`: wrote) one more element: the limit it just went past, if any.
    #[inline]
    pub(super) fn count(&mut self, t: usize, write: bool, budget: Option<Budget>) -> Option<u32> {
        let (count, limit) = if write {
            self.writes[t] += 1;
            (self.writes[t], budget.map(|b| b.writes))
        } else {
            self.reads[t] += 1;
            (self.reads[t], budget.map(|b| b.reads))
        };
        limit.filter(|&l| count == l.saturating_add(1))
    }

    /// At the end of a block: its most reads and writes of one thread into `stats`, and the
    /// counts cleared for the next block.
    pub(super) fn end_block(&mut self, stats: &mut AccessStats) {
        let most = |v: &[u32]| v.iter().copied().max().unwrap_or(0);
        stats.max_reads = stats.max_reads.max(most(&self.reads));
        stats.max_writes = stats.max_writes.max(most(&self.writes));
    }

    pub(super) fn begin_block(&mut self) {
        self.reads.iter_mut().for_each(|r| *r = 0);
        self.writes.iter_mut().for_each(|w| *w = 0);
    }
}

/// Products on the CUDA cores (each lane's multiply of any instruction and precision, per
/// element), the latest such instruction, and the multiply-adds the tensor cores did
/// (`ptx::ir::Op::tensor_macs`).
pub(crate) struct Products {
    /// Whether the budget counts them (puzzles 06, 11 and 12).
    pub(crate) on: bool,
    made: u64,
    inst: u32,
    tensor_macs: u64,
}

impl Products {
    pub(super) fn new(on: bool, budget: Option<Budget>) -> Self {
        Products {
            on: on
                && budget.is_some_and(|b| {
                    b.cuda_products_per_output.is_some()
                        || b.shared_reads_per_product.is_some()
                        || b.tensor_macs != 0
                }),
            made: 0,
            inst: 0,
            tensor_macs: 0,
        }
    }

    /// Lanes `exec` each made `products` products on the CUDA cores at `inst`.
    #[inline]
    pub(crate) fn cuda(&mut self, inst: usize, exec: u32, products: u32) {
        self.made += u64::from(exec.count_ones()) * u64::from(products);
        self.inst = inst as u32;
    }

    /// A warp's tensor-core instruction did `macs` multiply-adds.
    #[inline]
    pub(crate) fn tensor(&mut self, macs: u64) {
        self.tensor_macs += macs;
    }

    /// The products per output against `Budget::cuda_products_per_output`.
    fn per_output(&self, b: &Budget, elems: u64, stats: &mut AccessStats) -> Option<Finding> {
        let limit = b.cuda_products_per_output?;
        let outputs = problem_outputs(b, elems);
        let per_output = self.made.div_ceil(outputs.max(1)) as u32;
        stats.cuda_products_per_output = Some(per_output);
        (per_output > limit).then_some(Finding::ProductsOverBudget {
            per_output,
            limit,
            products: self.made,
            outputs,
            inst: self.inst,
        })
    }

    /// The tensor cores' multiply-adds against `Budget::tensor_macs`: all but what the CUDA
    /// cores may do (a K remainder) belongs on the tensor cores. A kernel over the products
    /// budget has been told where its products belong, and one that left outputs unwritten (a
    /// skeleton, `unwritten`) has a first thing to fix.
    fn tensor_short(
        &self,
        b: &Budget,
        elems: u64,
        unwritten: bool,
        stats: &mut AccessStats,
    ) -> Option<Finding> {
        if b.tensor_macs == 0 {
            return None;
        }
        let outputs = problem_outputs(b, elems);
        let cuda = u64::from(b.cuda_products_per_output.unwrap_or(0)) * outputs;
        let (done, needed) = (self.tensor_macs, b.tensor_macs);
        stats.tensor_macs = Some((done, needed));
        let over = stats.cuda_products_per_output.unwrap_or(0)
            > b.cuda_products_per_output.unwrap_or(u32::MAX);
        (done < needed.saturating_sub(cuda) && !over && !unwritten)
            .then_some(Finding::TensorShort { done, needed, cuda })
    }
}

/// The elements the lanes read from shared memory, and the latest such read
/// (`Budget::shared_reads_per_product`, puzzle 06).
pub(super) struct SharedReads {
    /// Whether the budget limits them.
    pub(super) on: bool,
    reads: u64,
    inst: u32,
}

impl SharedReads {
    pub(super) fn new(on: bool, budget: Option<Budget>) -> Self {
        SharedReads {
            on: on && budget.is_some_and(|b| b.shared_reads_per_product.is_some()),
            reads: 0,
            inst: 0,
        }
    }

    /// One shared read at `inst`.
    #[inline]
    pub(super) fn read(&mut self, inst: u32) {
        self.reads += 1;
        self.inst = inst;
    }

    /// The reads against `products` made on the CUDA cores.
    fn per_product(&self, b: &Budget, products: u64, stats: &mut AccessStats) -> Option<Finding> {
        let (reads, per) = b.shared_reads_per_product?;
        let made = (self.reads, products);
        stats.shared_reads_products = Some(made);
        (made.0 * u64::from(per) > made.1 * u64::from(reads)).then_some(Finding::SharedOverBudget {
            made,
            limit: (reads, per),
            inst: self.inst,
        })
    }
}

/// The buffer whose reads the budget limits (puzzle 10's input; `usize::MAX`: none), its reads,
/// the latest, and the floats of dynamic shared memory of the blocks run so far
/// (`Budget::staged_reads`).
pub(super) struct Staged {
    pub(super) buf: usize,
    reads: u64,
    inst: u32,
    words: u64,
}

impl Staged {
    pub(super) fn new(on: bool, budget: Option<Budget>) -> Self {
        Staged {
            buf: match budget.and_then(|b| b.staged_reads) {
                Some((buf, _, _)) if on => buf as usize,
                _ => usize::MAX,
            },
            reads: 0,
            inst: 0,
            words: 0,
        }
    }

    /// A block with `shared_bytes` of shared memory begins.
    pub(super) fn begin_block(&mut self, shared_bytes: usize) {
        self.words += (shared_bytes / 4) as u64;
    }

    /// One read of the staged buffer at `inst`.
    #[inline]
    pub(super) fn read(&mut self, inst: u32) {
        self.reads += 1;
        self.inst = inst;
    }

    /// The reads against the staged regions (`Budget::staged_region`, else the shared memory of
    /// the blocks run) times the budget's ratio, for `outputs` outputs.
    fn reading(&self, b: &Budget, outputs: u64, stats: &mut AccessStats) -> Option<Finding> {
        let (buf, num, den) = b.staged_reads?;
        let region = match b.staged_region {
            0 => self.words,
            r => r,
        };
        let allowed = region * u64::from(num) / u64::from(den.max(1));
        stats.staged_reads = Some((self.reads, allowed, outputs));
        (self.reads > allowed).then_some(Finding::StagedOverBudget {
            buf: buf as usize,
            reads: self.reads,
            allowed,
            outputs,
            inst: self.inst,
        })
    }
}

/// Puzzles 04 and 05's tile (`usize::MAX`: none): the buffer whose elements each block may read
/// `allowed` of, the block's reads so far, and its first read past them (with the element);
/// and the buffer no thread may read, with its reads (`Budget::tile_reads`).
pub(super) struct Tile {
    pub(super) buf: usize,
    allowed: u64,
    reads: u64,
    over: Option<(Access, usize)>,
    pub(super) unread_buf: usize,
    unread_reads: u64,
}

impl Tile {
    pub(super) fn new(on: bool, budget: Option<Budget>) -> Self {
        let tile = budget.and_then(|b| b.tile_reads);
        Tile {
            buf: match tile {
                Some(t) if on => t.buf as usize,
                _ => usize::MAX,
            },
            allowed: tile.map_or(0, |t| u64::from(t.tile) + u64::from(t.slack)),
            reads: 0,
            over: None,
            unread_buf: match tile.and_then(|t| t.unread) {
                Some(buf) if on => buf as usize,
                _ => usize::MAX,
            },
            unread_reads: 0,
        }
    }

    pub(super) fn begin_block(&mut self) {
        self.reads = 0;
        self.over = None;
    }

    /// A read of the tiled buffer by `me`, of element `index`.
    #[inline]
    pub(super) fn read(&mut self, me: Access, index: usize) {
        self.reads += 1;
        if self.reads == self.allowed + 1 {
            self.over = Some((me, index));
        }
    }

    /// A read of the buffer no thread may read by `me`, of element `index` of `buf`: always
    /// past the budget.
    #[inline]
    pub(super) fn unread(&mut self, me: Access, buf: usize, index: usize) -> Finding {
        self.unread_reads += 1;
        Finding::OverBudget {
            at: me,
            limit: 0,
            buf,
            index,
        }
    }

    /// At the end of block `block`: its reads of the tiled buffer against its tile.
    pub(super) fn end_block(
        &mut self,
        budget: Option<Budget>,
        block: u32,
        stats: &mut AccessStats,
    ) -> Option<Finding> {
        let t = budget.and_then(|b| b.tile_reads)?;
        let most = stats.tile_reads.map_or(0, |(m, _)| m);
        stats.tile_reads = Some((most.max(self.reads), u64::from(t.tile)));
        let (first, index) = self.over.take()?;
        Some(Finding::TileOverBudget {
            block,
            buf: t.buf as usize,
            reads: self.reads,
            tile: u64::from(t.tile),
            allowed: self.allowed,
            first,
            index,
        })
    }

    /// After the launch: the reads of the buffer no thread may read, where the budget names one.
    fn reading(&self, stats: &mut AccessStats) {
        if self.unread_buf != usize::MAX {
            stats.unread_reads = Some(self.unread_reads);
        }
    }
}

/// The budgets' counters of one launch.
pub(super) struct Budgets {
    pub(super) per_thread: PerThread,
    pub(crate) products: Products,
    pub(super) shared: SharedReads,
    pub(super) staged: Staged,
    pub(super) tile: Tile,
}

impl Budgets {
    pub(super) fn new(on: bool, budget: Option<Budget>, tpb: u32) -> Self {
        Budgets {
            per_thread: PerThread::new(tpb),
            products: Products::new(on, budget),
            shared: SharedReads::new(on, budget),
            staged: Staged::new(on, budget),
            tile: Tile::new(on, budget),
        }
    }

    /// After the launch, before the unwritten outputs are looked for: the launch-wide budgets
    /// read against `budget` for `elems` output elements, in the order they are reported.
    pub(super) fn launch_findings(
        &self,
        budget: Option<Budget>,
        elems: u64,
        stats: &mut AccessStats,
    ) -> Vec<Finding> {
        let found = budget.map(|b| {
            [
                self.products.per_output(&b, elems, stats),
                self.shared.per_product(&b, self.products.made, stats),
                self.staged.reading(&b, elems, stats),
            ]
        });
        self.tile.reading(stats);
        found.into_iter().flatten().flatten().collect()
    }

    /// After the unwritten outputs (`unwritten`: some were found): the tensor cores' share.
    pub(super) fn tensor_finding(
        &self,
        budget: Option<Budget>,
        elems: u64,
        unwritten: bool,
        stats: &mut AccessStats,
    ) -> Option<Finding> {
        self.products
            .tensor_short(&budget?, elems, unwritten, stats)
    }
}
