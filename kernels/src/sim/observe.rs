//! The one observer: a trait the executor calls where an access or an issued instruction happens.
//!
//! The checks (`check`, `check_global`) implement [`Observer`]; so do `runner show` (who touched
//! which element, per barrier phase) and `runner profile` (sectors, wavefronts, lanes, the
//! instruction mix), which attach one through [`super::run_observed`]. The executor calls the
//! checks statically and the attached observer through `dyn`; with the checks off and nothing
//! attached, an access pays one test of two flags and an issued instruction one test of an
//! `Option` (`kernels/BENCH.md` measures it). What the checks find and the fault that stops a
//! launch reach the observer after the launch as [`Mark`]s, placed at their element.

use super::check::Checks;
use super::exec::Machine;
pub use super::finding::Acc;
use super::finding::{Finding, Kept, local_name};
use super::ir::{Program, Space};
use super::memory::Spaces;

/// One lane's access to memory, as the executor makes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    /// `Shared`, `Global` or `Const`.
    pub space: Space,
    /// For `Global`, the buffer: 0-based, the kernel's pointer arguments in order, then module
    /// `.global` variables. 0 otherwise.
    pub buf: usize,
    /// The byte offset in that buffer, in the block's shared memory, or in const memory.
    pub byte: usize,
    pub bytes: u32,
    /// The thread, block-linear.
    pub thread: u32,
    /// The instruction (an index into [`Program::insts`]).
    pub inst: u32,
    pub acc: Acc,
}

/// One instruction issued by one warp: the warp's live lanes and those whose guard held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issue {
    pub warp: u32,
    pub inst: u32,
    pub active: u32,
    pub exec: u32,
}

/// What the launch is, for an observer about to see it.
pub struct Launched<'a> {
    pub prog: &'a Program,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Shared memory of each block, static and dynamic.
    pub shared_bytes: usize,
    /// The global buffers' names, in [`Touch::buf`] order.
    pub buffers: &'a [String],
}

/// What went wrong where: a fault or a finding of the checks, at its element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub kind: MarkKind,
    pub space: Space,
    /// The learner's name of the buffer or `__shared__` array.
    pub name: String,
    /// The element (4 bytes) in it; may lie outside it for [`MarkKind::OutOfBounds`].
    pub index: i64,
    /// The block, launch-linear, whose threads did it.
    pub block: u32,
    /// The accesses involved, the earlier first.
    pub sides: Vec<Side>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    OutOfBounds,
    Race,
    Uninit,
    /// A write into a pitched output's padding (the columns past the image's last one).
    Padding,
}

/// One access of a [`Mark`]: the block and thread (both linear), the instruction, a write or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    pub block: u32,
    pub thread: u32,
    pub inst: u32,
    pub write: bool,
}

/// A reader of the stream of accesses and issued instructions. Every method has a default that
/// does nothing, so an observer implements only what it reads.
pub trait Observer {
    /// Before the first block.
    fn start(&mut self, _launch: &Launched<'_>) {}
    /// Whether block `block` runs at all (a profile samples a few blocks of a large grid).
    fn runs_block(&mut self, _block: [u32; 3]) -> bool {
        true
    }
    fn begin_block(&mut self, _block: [u32; 3], _linear: u32, _shared_bytes: usize) {}
    /// A warp issues an instruction (before its accesses are seen).
    fn issue(&mut self, _issue: Issue) {}
    /// One lane's access, in lane order within an instruction.
    fn access(&mut self, _touch: &Touch) {}
    /// A `__syncthreads()` released the whole block: a new barrier phase.
    fn barrier(&mut self) {}
    fn end_block(&mut self) {}
    /// After the launch: the fault that stopped it and what the checks found.
    fn mark(&mut self, _mark: &Mark) {}
}

impl Observer for Checks {
    fn begin_block(&mut self, _block: [u32; 3], linear: u32, shared_bytes: usize) {
        Checks::begin_block(self, linear, shared_bytes);
    }
    #[inline(always)]
    fn access(&mut self, t: &Touch) {
        match t.space {
            Space::Shared => self.shared(t.byte, t.bytes as usize, t.thread, t.inst, t.acc),
            Space::Global => self.global(t.buf, t.byte, t.thread, t.inst, t.acc),
            _ => {}
        }
    }
    fn barrier(&mut self) {
        Checks::barrier(self);
    }
    fn end_block(&mut self) {
        Checks::end_block(self);
    }
}

impl Spaces<'_> {
    /// Whether anyone sees accesses: the checks or an attached observer.
    #[inline(always)]
    pub(super) fn watched(&self) -> bool {
        self.watch
    }

    /// Hands one access to the checks and the attached observer.
    #[inline(always)]
    pub(super) fn touch(&mut self, t: Touch) {
        if self.chk.on {
            Observer::access(self.chk, &t);
        }
        if self.obs.is_some() && !self.unobserved {
            self.tell(&t);
        }
    }

    /// The attached observer's share of [`Spaces::touch`], out of the checks' way.
    #[inline(never)]
    fn tell(&mut self, t: &Touch) {
        if let Some(o) = self.obs.as_deref_mut() {
            o.access(t);
        }
    }
}

impl Machine<'_> {
    /// Calls `f` on the checks, then on the attached observer.
    pub(super) fn seen(&mut self, f: impl Fn(&mut dyn Observer)) {
        f(&mut self.chk);
        if let Some(o) = self.obs.as_deref_mut() {
            f(o);
        }
    }

    /// Tells the attached observer that a warp issued an instruction.
    #[inline(always)]
    pub(super) fn issued(&mut self, warp: u32, inst: usize, active: u32, exec: u32) {
        if let Some(o) = self.obs.as_deref_mut() {
            o.issue(Issue {
                warp,
                inst: inst as u32,
                active,
                exec,
            });
        }
    }
}

/// A `__shared__` array as the learner declared it: its name and its bytes in the block's
/// shared memory (the dynamic `extern` array takes what the launch gives it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub name: String,
    pub offset: usize,
    pub size: usize,
}

/// The `__shared__` arrays of `prog` in a block of `shared_bytes`, in address order.
pub fn shared_arrays(prog: &Program, shared_bytes: usize) -> Vec<Array> {
    let mut arrays: Vec<Array> = prog
        .shared
        .iter()
        .map(|s| Array {
            name: local_name(&s.name).to_string(),
            offset: s.offset as usize,
            size: s.size as usize,
        })
        .collect();
    if let Some(name) = &prog.dyn_shared_name {
        let at = prog.dyn_shared_offset as usize;
        arrays.push(Array {
            name: local_name(name).to_string(),
            offset: at,
            size: shared_bytes.saturating_sub(at),
        });
    }
    arrays.sort_by_key(|a| a.offset);
    arrays
}

/// The array holding shared byte `byte`, and the element (4 bytes) in it.
pub fn shared_element(arrays: &[Array], byte: usize) -> Option<(&Array, i64)> {
    let a = arrays
        .iter()
        .find(|a| a.offset <= byte && byte < a.offset + a.size.max(1))?;
    Some((a, ((byte - a.offset) / 4) as i64))
}

/// A finding of the checks as a [`Mark`] (`None` for those with no one element: budgets,
/// unwritten outputs, which the report describes in full).
pub(super) fn finding_mark(k: &Kept, l: &Launched<'_>) -> Option<Mark> {
    let tpb = l.block.iter().product::<u32>().max(1);
    let side = |block: u32, a: &super::finding::Access| Side {
        block,
        thread: a.thread,
        inst: a.inst,
        write: a.write,
    };
    // One access of a global element by a launch-linear thread.
    let one = |kind, buf: usize, index: usize, at: &super::finding::Access| Mark {
        kind,
        space: Space::Global,
        name: l.buffers.get(buf).cloned().unwrap_or_default(),
        index: index as i64,
        block: at.thread / tpb,
        sides: vec![Side {
            block: at.thread / tpb,
            thread: at.thread % tpb,
            ..side(0, at)
        }],
    };
    let arrays = shared_arrays(l.prog, l.shared_bytes);
    let shared = |byte: u32| {
        shared_element(&arrays, byte as usize).map_or(
            (format!("shared byte {byte}"), i64::from(byte / 4)),
            |(a, i)| (a.name.clone(), i),
        )
    };
    Some(match &k.finding {
        Finding::SharedRace {
            block,
            byte,
            first,
            second,
            ..
        } => {
            let (name, index) = shared(*byte);
            Mark {
                kind: MarkKind::Race,
                space: Space::Shared,
                name,
                index,
                block: *block,
                sides: vec![side(*block, first), side(*block, second)],
            }
        }
        Finding::Uninit {
            block,
            byte,
            reader,
            ..
        } => {
            let (name, index) = shared(*byte);
            Mark {
                kind: MarkKind::Uninit,
                space: Space::Shared,
                name,
                index,
                block: *block,
                sides: vec![side(*block, reader)],
            }
        }
        Finding::GlobalRace {
            buf,
            index,
            first,
            second,
        } => {
            let global = |a: &super::finding::Access| Side {
                block: a.thread / tpb,
                thread: a.thread % tpb,
                ..side(0, a)
            };
            Mark {
                kind: MarkKind::Race,
                space: Space::Global,
                name: l.buffers.get(*buf).cloned().unwrap_or_default(),
                index: *index as i64,
                block: second.thread / tpb,
                sides: vec![global(first), global(second)],
            }
        }
        Finding::ReadUnwritten { buf, index, at, .. } => one(MarkKind::Uninit, *buf, *index, at),
        Finding::Padding { buf, index, at, .. } => one(MarkKind::Padding, *buf, *index, at),
        Finding::OverBudget { .. } | Finding::FmaOverBudget { .. } | Finding::Unwritten { .. } => {
            return None;
        }
    })
}

/// The out-of-bounds fault that stopped a launch, as a [`Mark`].
pub(super) fn fault_mark(f: &super::fault::Located, l: &Launched<'_>) -> Option<Mark> {
    let super::fault::Fault::OutOfBounds { write, mem } = &f.fault else {
        return None;
    };
    let [x, y, z] = f.block;
    let block = x + l.grid[0] * (y + l.grid[1] * z);
    let thread = f
        .thread
        .map_or(0, |[tx, ty, tz]| tx + l.block[0] * (ty + l.block[1] * tz));
    // Shared faults outside every array are indexed in bytes; name them by element.
    let index = if mem.name.is_none() {
        mem.index.div_euclid(4)
    } else {
        mem.index * i64::from(mem.elem.max(1)) / 4
    };
    Some(Mark {
        kind: MarkKind::OutOfBounds,
        space: mem.space,
        name: mem.name.clone().unwrap_or_else(|| "shared".into()),
        index,
        block,
        sides: vec![Side {
            block,
            thread,
            inst: f.inst.unwrap_or(0) as u32,
            write: *write,
        }],
    })
}
