//! The one observer: a trait the executor calls where an access or an issued instruction happens.
//!
//! The checks (`check`, `check_global`) implement [`Observer`]; so do `runner show` (who touched
//! which element, per barrier phase) and `runner profile` (sectors, wavefronts, lanes, the
//! instruction mix), which attach one through [`crate::run_observed`]. The executor calls the
//! checks statically and the attached observer through `dyn`; with the checks off and nothing
//! attached, an access pays one test of two flags and an issued instruction one test of an
//! `Option` (`kernels/sim/BENCH.md` measures it). What the checks find and the fault that stops a
//! launch reach the observer after the launch as [`Mark`]s, placed at their element.

pub use crate::finding::Acc;
use ptx::call::local_name;
use ptx::ir::{Program, Space};

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
