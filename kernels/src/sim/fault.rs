//! Faults: why a launch stopped, as values, and their translation into learner diagnostics.
//!
//! `exec` returns a [`Located`] fault: the [`Fault`] itself, the instruction that raised it (for
//! the learner's `.loc` line) and the block and thread. [`Located::diagnostic`] writes the
//! sentence a learner reads; the messages name buffers, indices and lengths, never slots or
//! addresses the learner cannot see.

use super::ir::{Program, Space};
use super::memory::MemFault;
use crate::diag::{Diagnostic, Kind};

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
}

/// A fault with where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub fault: Fault,
    pub inst: Option<usize>,
    pub block: [u32; 3],
    pub thread: Option<[u32; 3]>,
}

fn oob_message(write: bool, m: &MemFault) -> String {
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
            Fault::OutOfBounds { write, mem } => (Kind::OutOfBounds, oob_message(*write, mem)),
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
        };
        let mut d = Diagnostic::new(kind, message);
        if let Some(inst) = self.inst.and_then(|i| prog.insts.get(i))
            && inst.line > 0
        {
            d = d.at_line(prog.file_name(inst.file), inst.line);
        }
        d.block = Some(self.block);
        d.thread = self.thread;
        d
    }
}

impl Program {
    /// The `.file` name of index `file`, as the learner knows it (the last path component).
    pub fn file_name(&self, file: u32) -> String {
        self.files
            .iter()
            .find(|(i, _)| *i == file)
            .map(|(_, p)| p.rsplit('/').next().unwrap_or(p).to_string())
            .unwrap_or_else(|| "kernel.cu".to_string())
    }
}
