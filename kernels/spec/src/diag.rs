//! Diagnostics: what went wrong, where, and in which thread.
//!
//! Every backend and every check reports through [`Diagnostic`]; its field names and the
//! snake_case names of [`Kind`] are the `--json` contract the book states (its introduction, and
//! the Contracts appendix, which quotes `Kind` between the `kinds` anchors), so renaming one breaks
//! graders. A diagnostic always has a message written for a learner; the location fields are
//! filled where they are known.

use serde::{Deserialize, Serialize};
use std::fmt;

// ANCHOR: kinds
/// The kinds of diagnostic, as they appear in `--json` output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    CompileError,
    KernelNotFound,
    SignatureMismatch,
    NvrtcMissing,
    OutOfBounds,
    Race,
    UninitializedRead,
    BarrierDivergence,
    Timeout,
    BudgetExceeded,
    WrongOutput,
    UnwrittenOutput,
    LaunchError,
    UnsupportedInstruction,
    /// The kernel executed `trap` (`__trap()`) or failed an `assert`.
    Trap,
    /// A store into a buffer the puzzle passes as an input.
    WroteInput,
    /// Calls nested deeper than the simulator's (or the GPU's) call stack allows.
    StackOverflow,
    /// A declared launch shape (puzzles 08 and 10) missing, malformed, or one no GPU can launch.
    BadLaunchShape,
    /// An element of a pitched output's padding (columns past the row's end) was changed.
    PaddingWritten,
    /// An `#include` of something other than CUDA's headers and the source's own folder: an
    /// absolute path, a `..` climbing out, a computed include (`include_guard`).
    IncludeRefused,
    /// A bug of the runner itself (a panic in the simulator), reported instead of a crash.
    InternalError,
}
// ANCHOR_END: kinds

impl Kind {
    /// The name used in JSON and in the colored report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::CompileError => "compile_error",
            Kind::KernelNotFound => "kernel_not_found",
            Kind::SignatureMismatch => "signature_mismatch",
            Kind::NvrtcMissing => "nvrtc_missing",
            Kind::OutOfBounds => "out_of_bounds",
            Kind::Race => "race",
            Kind::UninitializedRead => "uninitialized_read",
            Kind::BarrierDivergence => "barrier_divergence",
            Kind::Timeout => "timeout",
            Kind::BudgetExceeded => "budget_exceeded",
            Kind::WrongOutput => "wrong_output",
            Kind::UnwrittenOutput => "unwritten_output",
            Kind::LaunchError => "launch_error",
            Kind::UnsupportedInstruction => "unsupported_instruction",
            Kind::Trap => "trap",
            Kind::WroteInput => "wrote_input",
            Kind::StackOverflow => "stack_overflow",
            Kind::BadLaunchShape => "bad_launch_shape",
            Kind::PaddingWritten => "padding_written",
            Kind::IncludeRefused => "include_refused",
            Kind::InternalError => "internal_error",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One finding about a kernel, located as precisely as the backend could.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub kind: Kind,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub block: Option<[u32; 3]>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub thread: Option<[u32; 3]>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub case: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub chapter: Option<String>,
}

impl Diagnostic {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        let message = message.into();
        debug_assert!(!message.is_empty(), "a diagnostic needs a message");
        Diagnostic {
            kind,
            message,
            file: None,
            line: None,
            block: None,
            thread: None,
            case: None,
            chapter: None,
        }
    }

    pub fn at_line(mut self, file: impl Into<String>, line: u32) -> Self {
        self.file = Some(file.into());
        self.line = Some(line);
        self
    }

    pub fn in_thread(mut self, block: [u32; 3], thread: [u32; 3]) -> Self {
        self.block = Some(block);
        self.thread = Some(thread);
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let (Some(file), Some(line)) = (&self.file, self.line) {
            write!(f, " ({file}:{line})")?;
        }
        if let (Some(b), Some(t)) = (self.block, self.thread) {
            write!(
                f,
                " [block ({},{},{}) thread ({},{},{})]",
                b[0], b[1], b[2], t[0], t[1], t[2]
            )?;
        }
        Ok(())
    }
}
