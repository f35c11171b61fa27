//! PTX text to a decoded program, and nothing that runs it.
//!
//! `lex` and `parse` turn NVRTC's PTX into a syntax tree ([`parse::Module`]); `decode` (with
//! `opcode`, `opcode_mem` and one module per instruction family that needs more than a table
//! row: `mma`, `wmma`, `wgmma`, `bulk`, `tensor_map`, `mbarrier`, `named`, `call`) turns one
//! kernel of it into an [`ir::Program`], once: every instruction an enum with its operands
//! resolved to register slots. `provenance` attributes each shared access to the array it
//! derives from, and `addr` is the address map both the decoder and the simulator lay
//! memory out by.
//!
//! This crate may import only the standard library. The simulator (`sim`) sits above it and
//! executes what it decodes; nothing here knows of execution, diagnostics or the runner.

pub mod addr;
pub mod bulk;
pub mod call;
pub mod copy;
pub mod declared;
pub mod decode;
pub mod inline;
pub mod ir;
mod lex;
pub mod mbarrier;
pub mod mma;
mod mods;
pub mod named;
pub mod opcode;
pub mod opcode_mem;
pub mod parse;
mod parse_body;
pub mod provenance;
mod special;
pub mod tensor_map;
pub mod types;
pub mod vars;
pub mod wgmma;
pub mod wmma;

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
        bytes: decode::init_bytes(var),
        initialized: !var.init.is_empty(),
        align: var.align,
    })
}
