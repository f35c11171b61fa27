//! Faults: why a launch stopped, as values, and their translation into learner diagnostics.
//!
//! `exec` returns a [`Located`] fault: the [`Fault`] itself, the instruction that raised it (for
//! the learner's `.loc` line) and the block and thread. [`Located::diagnostic`] writes the
//! sentence a learner reads; the messages name buffers, indices and lengths, never slots or
//! addresses the learner cannot see.

use crate::memory::MemFault;
use crate::site::Locate;
use ptx::ir::{Program, Space};
use spec::diag::{Diagnostic, Kind};

#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    OutOfBounds {
        write: bool,
        mem: MemFault,
    },
    Unsupported {
        what: String,
    },
    Timeout {
        budget: u64,
    },
    /// Threads of one block wait at different barriers, or at a barrier others never reach.
    BarrierDivergence {
        detail: String,
    },
    /// An access whose address or size breaks its instruction's alignment rule (a bulk copy's
    /// 16 bytes): the GPU stops the launch with "misaligned address".
    Misaligned {
        detail: String,
    },
    /// A tensor copy whose tensor map the hardware cannot use (the GPU stops the launch with
    /// "illegal instruction").
    BadTensorMap {
        detail: String,
    },
    /// `trap` (`__trap()`), or a failed `assert` (`__assertfail`).
    Trap {
        assert: Option<Assert>,
    },
    /// A call nested `depth` deep, to `func`.
    StackOverflow {
        func: String,
        depth: usize,
    },
}

/// What a failed `assert` passes to `__assertfail`.
#[derive(Clone, Debug, PartialEq)]
pub struct Assert {
    pub cond: String,
    pub file: String,
    pub line: u32,
    pub func: String,
}

/// A fault with where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub fault: Fault,
    pub inst: Option<usize>,
    pub block: [u32; 3],
    pub thread: Option<[u32; 3]>,
}

/// The sentence of an access out of bounds; `via`: the learner's pointer it went through, as
/// [`crate::finding::through`] says it (a shared array only; empty for none).
fn oob_message(write: bool, m: &MemFault, via: &str) -> String {
    let verb = if write { "writes" } else { "reads" };
    match (&m.space, &m.name) {
        (Space::Global, Some(name)) if m.index < 0 => format!(
            "{verb} `{name}[{}]`, before the start of `{name}` ({} elements); an index went negative",
            m.index, m.len
        ),
        (Space::Global, Some(name)) => format!(
            "{verb} `{name}[{}]`, but `{name}` has only {} elements (valid indices 0..{}); a bounds guard is missing or wrong",
            m.index,
            m.len,
            m.len.saturating_sub(1)
        ),
        (Space::Global, None) => format!(
            "{verb} global address {:#x}, which is outside every buffer of this launch",
            m.index
        ),
        (Space::Shared, Some(name)) if m.index < 0 => format!(
            "{verb} `{name}[{}]`{via}, before the start of the shared array `{name}` ({} elements); an index went negative",
            m.index, m.len
        ),
        (Space::Shared, Some(name)) => format!(
            "{verb} `{name}[{}]`{via}, but the shared array `{name}` has only {} elements (valid indices 0..{}); on a GPU this would silently touch the shared memory next to it: an index or a loop bound is off",
            m.index,
            m.len,
            m.len.saturating_sub(1)
        ),
        (Space::Shared, _) => format!(
            "{verb} shared memory at byte {}, but the block has only {} bytes of shared memory (static arrays plus the dynamic size of the launch)",
            m.index, m.len
        ),
        (space, Some(what)) => format!(
            "{verb} {what} in {} memory at byte {}",
            space.name(),
            m.index
        ),
        (space, None) => format!(
            "{verb} {} memory at byte {}, past its {} bytes",
            space.name(),
            m.index,
            m.len
        ),
    }
}

impl Located {
    pub fn diagnostic(&self, prog: &Program) -> Diagnostic {
        let (kind, message) = match &self.fault {
            Fault::OutOfBounds { write: true, mem } if mem.read_only && mem.space == Space::Global => {
                let name = mem.name.as_deref().unwrap_or("?");
                (
                    Kind::WroteInput,
                    format!(
                        "writes `{name}[{}]`, but `{name}` is an input of this puzzle and inputs are read-only (the parameter is `const`): on a GPU, blocks that read what another block overwrote get results that depend on the schedule; keep partial results in registers or shared memory and write only to the output",
                        mem.index
                    ),
                )
            }
            Fault::OutOfBounds { write, mem } => {
                let via = match (&mem.name, self.inst) {
                    (Some(name), Some(inst)) if mem.space == Space::Shared => {
                        crate::finding::through_array(prog, name, inst as u32)
                    }
                    _ => String::new(),
                };
                (Kind::OutOfBounds, oob_message(*write, mem, &via))
            }
            Fault::Unsupported { what } => (
                Kind::UnsupportedInstruction,
                format!(
                    "the simulator does not support the PTX instruction {what}; run this kernel on a GPU, or write it without that feature"
                ),
            ),
            Fault::Timeout { budget } => (
                Kind::Timeout,
                format!(
                    "the kernel ran more than {budget} thread-instructions without finishing; a loop probably never ends (check its condition and increment)"
                ),
            ),
            Fault::BarrierDivergence { detail } => (Kind::BarrierDivergence, detail.clone()),
            Fault::Misaligned { detail } => (Kind::OutOfBounds, detail.clone()),
            Fault::BadTensorMap { detail } => (Kind::LaunchError, detail.clone()),
            Fault::Trap { assert: None } => (
                Kind::Trap,
                "the kernel executed `__trap()` (PTX `trap`): on a GPU this aborts the whole launch with an error and no output is kept".to_string(),
            ),
            Fault::Trap { assert: Some(a) } => (
                Kind::Trap,
                format!(
                    "assertion `{}` failed in {} ({}:{}): on a GPU a failed assert aborts the whole launch, and no output is kept",
                    a.cond, a.func, a.file, a.line
                ),
            ),
            Fault::StackOverflow { func, depth } => (Kind::StackOverflow, format!(
                "the call to `{func}` would nest {} calls deep, past the limit of {depth}: a recursion whose end condition is never met, or one that goes too deep for a GPU thread's stack (1 KiB by default); end it sooner or write it as a loop",
                depth + 1
            )),
        };
        let mut d = Diagnostic::new(kind, message);
        if let Some(inst) = self.inst.and_then(|i| prog.insts.get(i)) {
            d = prog.locate(d, inst);
        }
        d.block = Some(self.block);
        d.thread = self.thread;
        d
    }
}
