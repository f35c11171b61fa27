//! PTX text to a decoded program, and nothing that runs it.
//!
//! `parse` turns NVRTC's PTX into a syntax tree; `decode` (its dispatcher, and one private module
//! per instruction family that needs more than a table row) turns one kernel of it into an
//! [`ir::Program`], once: every instruction an enum with its operands resolved to register slots.
//! `ir` holds every type of the decoded program, the families' operations among them, and imports
//! no decoder. `provenance` attributes each shared access to the array it derives from, `declared`
//! reads the learner's `__shared__` declarations from the CUDA source, and `addr` is the address
//! map both the decoder and the simulator lay memory out by. Dependencies run one way: `parse`
//! knows nothing of the IR; `ir` knows nothing of decoding; `decode` uses both.
//!
//! What other crates use is the short list at the top: [`decode()`], [`DecodeError`], the `ir`,
//! `addr`, `declared` and `provenance` modules, [`demangle`] and [`local_name`], [`module_array`].
//!
//! This crate may import only the standard library. The simulator (`sim`) sits above it and
//! executes what it decodes; nothing here knows of execution, diagnostics or the runner.

pub mod addr;
pub mod declared;
mod decode;
pub mod ir;
mod parse;
pub mod provenance;

pub use decode::call::{demangle, local_name};
pub use decode::ctx::DecodeError;
pub use decode::decode;

/// A module-scope `.global` or `.const` array of a PTX module, as the simulator lays it out.
pub struct ModuleArray {
    /// Its bytes, little-endian, zeros where the initializer stops (NVRTC leaves trailing zero
    /// elements out).
    pub bytes: Vec<u8>,
    /// Whether the declaration has an initializer at all.
    pub initialized: bool,
    /// Its declared alignment in bytes (`.align`; 0 where none is given).
    pub align: u32,
}

/// The array `symbol` declared at module scope in `ptx`, if the PTX parses and declares it.
pub fn module_array(ptx: &str, symbol: &str) -> Option<ModuleArray> {
    let module = parse::parse(ptx).ok()?;
    let var = module.vars.iter().find(|v| {
        v.name == symbol && matches!(v.space.trim_start_matches('.'), "global" | "const")
    })?;
    Some(ModuleArray {
        bytes: decode::vars::init_bytes(var),
        initialized: !var.init.is_empty(),
        align: var.align,
    })
}
