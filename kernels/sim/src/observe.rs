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
use crate::finding::declared;
use ptx::ir::{Program, Space};
use ptx::local_name;

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
    /// The element in it (4 bytes of a buffer, one of its declared type in a `__shared__` array);
    /// may lie outside it for [`MarkKind::OutOfBounds`].
    pub index: i64,
    /// The block, launch-linear, whose threads did it.
    pub block: u32,
    /// The accesses involved, the earlier first.
    pub sides: Vec<Side>,
    /// The element as the diagnostic names it, where it says more than `name[index]`: one
    /// component of a vector type (`sab[0].y`), a declared shape (`sb[1][0][0]`).
    pub element: Option<String>,
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
/// shared memory (the dynamic `extern` array takes what the launch gives it), and its
/// declaration where the source's agrees with the PTX (`finding::declared`): its elements are
/// then the declared type's (a `float2` array's 8 bytes each), else 4-byte words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub decl: Option<ptx::declared::SharedDecl>,
}

impl Array {
    /// Bytes of one element.
    pub fn elem(&self) -> usize {
        self.decl
            .as_ref()
            .map_or(4, |d| d.elem_bytes.max(1) as usize)
    }

    /// Elements the array holds.
    pub fn len(&self) -> usize {
        self.size / self.elem()
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The learner's name of element `index`: `As[1][0][0]` in a declared 3D array, `sm[7]`.
    pub fn element(&self, index: i64) -> String {
        match (&self.decl, u64::try_from(index)) {
            (Some(d), Ok(i)) => d.element(i * self.elem() as u64, self.elem() as u32),
            _ => format!("{}[{index}]", self.name),
        }
    }
}

/// The `__shared__` arrays of `prog` in a block of `shared_bytes`, in address order.
pub fn shared_arrays(prog: &Program, shared_bytes: usize) -> Vec<Array> {
    let mut arrays: Vec<Array> = prog
        .shared
        .iter()
        .map(|s| {
            let name = local_name(&s.name);
            Array {
                name: name.to_string(),
                offset: s.offset as usize,
                size: s.size as usize,
                decl: declared(prog, name, Some(s.size)).cloned(),
            }
        })
        .collect();
    if let Some(name) = &prog.dyn_shared_name {
        let at = prog.dyn_shared_offset as usize;
        let name = local_name(name);
        arrays.push(Array {
            name: name.to_string(),
            offset: at,
            size: shared_bytes.saturating_sub(at),
            decl: declared(prog, name, None).cloned(),
        });
    }
    arrays.sort_by_key(|a| a.offset);
    arrays
}

/// The array holding shared byte `byte`, and the element in it (of its declared type).
pub fn shared_element(arrays: &[Array], byte: usize) -> Option<(&Array, i64)> {
    let a = arrays
        .iter()
        .find(|a| a.offset <= byte && byte < a.offset + a.size.max(1))?;
    Some((a, ((byte - a.offset) / a.elem()) as i64))
}
