//! The teaching checks of shared memory: shadow state beside the memory, and what it found.
//!
//! Shared memory has one [`Word`] of shadow per 4 bytes, reset for each block (a word that an
//! access of fewer than its 4 bytes touches is split into a shadow per byte, so two threads
//! writing different halves or bytes of one word are no race): who last wrote it,
//! at which instruction and in which barrier epoch (the epoch grows at every released
//! `bar.sync`), and who read it in the current epoch. Two different threads touching one word in
//! the same epoch, one of them writing, is a race, whatever warp they are in: code that relies on
//! lockstep counts too, unless a `__syncwarp()` (`bar.warp.sync`) orders them: two threads of
//! one warp are ordered when both have passed a `__syncwarp()` of their warp since the earlier
//! access (each lane remembers the last one it executed; a `__syncwarp()` counts for the lanes
//! that execute it together, whatever its mask says). A read of a word no thread of the block has
//! written yet is held until the epoch ends: if another thread writes it later in the same epoch
//! without such an order the race is the diagnosis, otherwise it is an uninitialized read. Global
//! memory and the budget are in `check_global`. Atomics never race with each other. What the
//! checks find are [`Finding`] values, capped per kind; `report` turns them into diagnostics.

pub use crate::finding::Acc;
use crate::finding::{Access, Finding, Kept};
use ptx::ir::Program;
use spec::job::{AccessStats, Budget, Pitch};

/// Distinct findings kept per kind (a finding is distinct by its kind and instructions).
pub const CAP: usize = 3;
/// Reads of never-written shared words waiting for their epoch to end.
pub(super) const PENDING_CAP: usize = 4096;
pub(super) const ATOMIC: u32 = u32::MAX;

/// Shadow of one shared 4-byte word. Thread fields hold the block-linear id plus one (0: none).
#[derive(Clone, Copy, Default)]
pub(super) struct Word {
    pub(super) w: u32,
    pub(super) w_inst: u32,
    pub(super) w_epoch: u32,
    pub(super) r: u32,
    pub(super) r2: u32,
    pub(super) r_inst: u32,
    pub(super) r_epoch: u32,
    /// The writer's (the latest reader's) warp `__syncwarp()` count at the access.
    pub(super) w_seq: u32,
    pub(super) r_seq: u32,
    /// The writer's and the two readers' warp clock stamps (`order`).
    pub(super) w_clk: u32,
    pub(super) r_clk: u32,
    pub(super) r2_clk: u32,
    /// 0, or 1 + the index in `Checks::bytes` of this word's four byte shadows, once an
    /// access touched part of it.
    pub(super) split: u32,
}

/// Shadow of one global 4-byte element. Thread fields hold the launch-linear id plus one.
#[derive(Clone, Copy, Default)]
pub(super) struct Elem {
    pub(super) w: u32,
    pub(super) w_inst: u32,
    pub(super) r: u32,
    pub(super) r2: u32,
    pub(super) r_inst: u32,
}

/// Which shadow an access goes to: a whole word's, or one byte's of a split word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shadow {
    Word(u32),
    Byte(u32),
}

/// A read of never-written shared memory held until its epoch ends: shadow, (byte, width),
/// epoch, reader, and the reader's `__syncwarp()` count and clock stamp.
pub(super) type Pending = (Shadow, (u32, u32), u32, Access, (u32, u32));

/// One access as one shadow sees it: the shadow, its first byte, the access's width in bytes
/// (findings index the array by it), the thread and instruction, and whether a finding is
/// already told for this access (`quiet`: found, not reported again).
#[derive(Clone, Copy)]
pub(super) struct One {
    pub(super) at: Shadow,
    pub(super) byte: u32,
    pub(super) width: u32,
    pub(super) tid: u32,
    pub(super) inst: u32,
    pub(super) quiet: bool,
}

/// The checks of one launch.
pub struct Checks {
    pub on: bool,
    /// The learner's line of each instruction.
    pub(super) lines: Vec<u32>,
    pub(super) budget: Option<Budget>,
    pub(super) tpb: u32,
    pub(super) block: u32,
    pub(super) epoch: u32,
    pub(super) shared: Vec<Word>,
    /// The byte shadows of split words, four per word.
    pub(super) bytes: Vec<Word>,
    pub(super) pending: Vec<Pending>,
    /// `__syncwarp()`s executed per warp of the block, and the latest each thread executed.
    pub(super) warp_seq: Vec<u32>,
    pub(super) lane_seq: Vec<u32>,
    /// Happens-before through named barriers and `mbarrier` phases.
    pub(super) order: crate::order::Order,
    /// The shared bytes `[lo, hi)` of initialized `mbarrier` objects, and the first ordinary
    /// access to one (instruction, thread, write), which `exec` turns into a diagnostic.
    pub(super) mbar_bytes: Vec<(u32, u32)>,
    pub(super) mbar_touch: Option<(u32, u32, bool)>,
    /// The shared sources of bulk stores still being read (`bulk`), and each thread's count of
    /// committed bulk groups.
    pub(super) bulk_reads: Vec<BulkRead>,
    pub(super) bulk_groups: Vec<u32>,
    /// Whether a bulk store is moving its bytes (its global writes are its destination), and
    /// the global elements (buffer, index) of bulk stores still writing: their thread
    /// (block-linear), instruction and bulk group (0: not committed yet).
    pub(super) bulk_storing: bool,
    pub(super) bulk_writes: std::collections::HashMap<(u32, u32), (u32, u32, u32)>,
    /// The shared words under `cp.async` and bulk copies in flight (`inflight`).
    pub(super) flight: crate::inflight::InFlight,
    pub(super) globals: Vec<Vec<Elem>>,
    pub(super) track_reads: Vec<bool>,
    /// Per buffer, its shape when it is a pitched output (writes into its padding are findings).
    pub(super) pitches: Vec<Option<Pitch>>,
    pub(super) reads: Vec<u32>,
    pub(super) writes: Vec<u32>,
    /// Whether the budget counts products on the CUDA cores (puzzles 06, 11 and 12), the
    /// launch's (each lane's multiply of any instruction and precision, per element), the latest
    /// such instruction, and the multiply-adds the tensor cores did
    /// (`check_global::cuda_core_products`, `ptx::ir::Op::tensor_macs`).
    pub(super) count_products: bool,
    pub(super) products: u64,
    pub(super) product_inst: u32,
    pub(super) tensor_macs: u64,
    /// Whether the budget limits shared reads per product (puzzle 06), how many elements the
    /// lanes read from shared memory, and the latest such read (`check_global::Checks::finish`).
    pub(super) count_shared: bool,
    pub(super) shared_reads: u64,
    pub(super) shared_inst: u32,
    /// The buffer whose reads the budget limits (puzzle 10's input; `usize::MAX`: none), its
    /// reads, the latest, and the floats of dynamic shared memory of the blocks run so far.
    pub(super) staged_buf: usize,
    pub(super) staged_reads: u64,
    pub(super) staged_inst: u32,
    pub(super) staged_words: u64,
    /// Puzzles 04 and 05's tile (`usize::MAX`: none): the buffer whose elements each block may
    /// read `tile_allowed` of, the block's reads so far, and its first read past them (with the
    /// element); the buffer no thread may read.
    pub(super) tile_buf: usize,
    pub(super) tile_allowed: u64,
    pub(super) tile_reads: u64,
    pub(super) tile_over: Option<(Access, usize)>,
    pub(super) unread_buf: usize,
    pub(super) unread_reads: u64,
    pub stats: AccessStats,
    pub kept: Vec<Kept>,
}

/// The shared source `[lo, hi)` of a bulk store by thread `tid` at `inst`, in its bulk group
/// `group` (0: not committed yet).
#[derive(Clone, Copy)]
pub(super) struct BulkRead {
    pub(super) lo: u32,
    pub(super) hi: u32,
    pub(super) tid: u32,
    pub(super) inst: u32,
    pub(super) group: u32,
}

impl Checks {
    /// Checks for a launch of `tpb` threads per block over global buffers of `lens` bytes
    /// (`outputs[i]`: buffer `i` is an output, whose reads are tracked too).
    pub fn new(
        on: bool,
        prog: &Program,
        budget: Option<Budget>,
        tpb: u32,
        lens: &[usize],
        outputs: &[bool],
    ) -> Self {
        let globals = if on {
            lens.iter()
                .map(|&n| vec![Elem::default(); n.div_ceil(4)])
                .collect()
        } else {
            vec![]
        };
        Checks {
            on,
            lines: prog.insts.iter().map(|i| i.line).collect(),
            budget,
            tpb,
            block: 0,
            epoch: 1,
            shared: vec![],
            bytes: vec![],
            pending: vec![],
            warp_seq: vec![0; tpb.div_ceil(32) as usize],
            lane_seq: vec![0; tpb as usize],
            order: Default::default(),
            mbar_bytes: vec![],
            mbar_touch: None,
            bulk_reads: vec![],
            bulk_groups: vec![0; tpb as usize],
            bulk_storing: false,
            bulk_writes: Default::default(),
            flight: Default::default(),
            globals,
            track_reads: outputs.to_vec(),
            pitches: vec![None; lens.len()],
            reads: vec![0; tpb as usize],
            writes: vec![0; tpb as usize],
            count_products: on
                && budget.is_some_and(|b| {
                    b.cuda_products_per_output.is_some()
                        || b.shared_reads_per_product.is_some()
                        || b.tensor_macs != 0
                }),
            products: 0,
            product_inst: 0,
            tensor_macs: 0,
            count_shared: on && budget.is_some_and(|b| b.shared_reads_per_product.is_some()),
            shared_reads: 0,
            shared_inst: 0,
            staged_buf: match budget.and_then(|b| b.staged_reads) {
                Some((buf, _, _)) if on => buf as usize,
                _ => usize::MAX,
            },
            staged_reads: 0,
            staged_inst: 0,
            staged_words: 0,
            tile_buf: match budget.and_then(|b| b.tile_reads) {
                Some(t) if on => t.buf as usize,
                _ => usize::MAX,
            },
            tile_allowed: budget
                .and_then(|b| b.tile_reads)
                .map_or(0, |t| u64::from(t.tile) + u64::from(t.slack)),
            tile_reads: 0,
            tile_over: None,
            unread_buf: match budget.and_then(|b| b.tile_reads).and_then(|t| t.unread) {
                Some(buf) if on => buf as usize,
                _ => usize::MAX,
            },
            unread_reads: 0,
            stats: AccessStats::default(),
            kept: vec![],
        }
    }

    pub(super) fn report(&mut self, f: Finding) {
        let key = f.key(&self.lines);
        let lines = &self.lines;
        if let Some(k) = self.kept.iter_mut().find(|k| k.finding.key(lines) == key) {
            k.repeats += 1;
            return;
        }
        let same: Vec<usize> = (0..self.kept.len())
            .filter(|&i| self.kept[i].finding.key(lines).0 == key.0)
            .collect();
        match same.last() {
            Some(&last) if same.len() >= CAP => self.kept[last].hidden += 1,
            _ => self.kept.push(Kept {
                finding: f,
                repeats: 0,
                hidden: 0,
            }),
        }
    }

    /// A new block `linear` with `shared_bytes` of shared memory.
    pub fn begin_block(&mut self, linear: u32, shared_bytes: usize) {
        if !self.on {
            return;
        }
        self.block = linear;
        self.epoch = 1;
        self.staged_words += (shared_bytes / 4) as u64;
        self.shared.clear();
        self.shared
            .resize(shared_bytes.div_ceil(4), Word::default());
        self.bytes.clear();
        self.warp_seq.iter_mut().for_each(|s| *s = 0);
        self.lane_seq.iter_mut().for_each(|s| *s = 0);
        self.order.reset(self.tpb.div_ceil(32) as usize);
        self.mbar_bytes.clear();
        self.mbar_touch = None;
        self.bulk_reads.clear();
        self.bulk_groups.iter_mut().for_each(|g| *g = 0);
        self.bulk_writes.clear();
        self.flight.reset();
        self.reads.iter_mut().for_each(|r| *r = 0);
        self.writes.iter_mut().for_each(|w| *w = 0);
        self.tile_reads = 0;
        self.tile_over = None;
    }

    /// A barrier released every thread of the block: a new epoch.
    pub fn barrier(&mut self) {
        if self.on {
            self.flush();
            self.epoch += 1;
            self.flight.bulk_barrier();
        }
    }

    /// The lanes `exec` of the warp whose first thread is `tid0` executed a `__syncwarp()`.
    pub fn syncwarp(&mut self, tid0: u32, exec: u32) {
        if !self.on {
            return;
        }
        let Some(seq) = self.warp_seq.get_mut(tid0 as usize / 32) else {
            return;
        };
        *seq += 1;
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            if let Some(s) = self.lane_seq.get_mut(tid0 as usize + l) {
                *s = *seq;
            }
        }
    }

    /// The warp `__syncwarp()` count of thread `tid` now.
    #[inline]
    pub(super) fn seq(&self, tid: u32) -> u32 {
        self.warp_seq.get(tid as usize / 32).copied().unwrap_or(0)
    }

    /// Whether an access by thread `a` when its warp's count was `seq` and its clock stamp
    /// `clk` happens before any later access by thread `b` in the same epoch: both of one warp
    /// and both past a later `__syncwarp()`, or ordered by a named barrier or an `mbarrier`
    /// phase between their warps (`order`).
    #[inline]
    pub(super) fn ordered(&self, a: u32, b: u32, (seq, clk): (u32, u32)) -> bool {
        let passed = |t: u32| self.lane_seq.get(t as usize).is_some_and(|&s| s > seq);
        a / 32 == b / 32 && passed(a) && passed(b) || self.order.before(a, clk, b)
    }

    pub fn end_block(&mut self) {
        if !self.on {
            return;
        }
        self.flush();
        let (r, w) = (
            self.reads.iter().copied().max().unwrap_or(0),
            self.writes.iter().copied().max().unwrap_or(0),
        );
        self.stats.max_reads = self.stats.max_reads.max(r);
        self.stats.max_writes = self.stats.max_writes.max(w);
        self.end_tile();
    }

    /// Reports the held reads of never-written words that no other thread wrote in their epoch.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for (at, (byte, width), epoch, reader, seq) in pending {
            let s = *self.shadow(at);
            let t = reader.thread;
            if s.w_epoch == epoch && s.w != t + 1 && !self.ordered(t, s.w - 1, seq) {
                continue; // reported as a race when the other thread wrote it
            }
            let block = self.block;
            self.report(Finding::Uninit {
                block,
                byte,
                width,
                reader,
            });
        }
    }

    pub(super) fn shadow(&mut self, at: Shadow) -> &mut Word {
        match at {
            Shadow::Word(w) => &mut self.shared[w as usize],
            Shadow::Byte(b) => &mut self.bytes[b as usize],
        }
    }

    /// The index of the first byte shadow of `word`, splitting it (each byte starting with the
    /// word's history, which a whole-word access made for all four bytes).
    pub(super) fn split(&mut self, word: usize) -> u32 {
        let s = self.shared[word];
        if s.split != 0 {
            return s.split - 1;
        }
        let first = self.bytes.len() as u32;
        self.bytes.extend([s; 4]);
        self.shared[word].split = first + 1;
        first
    }
}
