//! Decode one parsed kernel into a [`Program`]: lay out the state spaces, resolve register names
//! to slots (inline-asm `{ }` scopes shadow outer names), symbols to addresses and labels to
//! instruction indices.
//!
//! An instruction this simulator does not know is not an error here: it decodes to
//! `Op::Unsupported`, which stops the run only if a thread reaches it (a `printf` in dead code
//! does no harm). Malformed operands of a known instruction are errors with the PTX line.
//!
//! `ctx` holds what every family's decoder shares (the decoding state, the error, the opcode
//! word) and imports no decoder; `body` walks one body's statements and hands each instruction to
//! `opcode`, which decodes the plain arithmetic, memory and control instructions itself and
//! dispatches the families with operand types of their own (`mma`, `wmma`, `wgmma`, `bulk`,
//! `tensor_map`, `mbarrier`, `named`, `copy`); `call` decodes the device functions a kernel calls,
//! `vars` lays out variables. The decoders are private: other crates see [`decode`] and the IR.

mod body;
mod bulk;
pub(crate) mod call;
mod copy;
pub(crate) mod ctx;
mod mbarrier;
mod mma;
mod mods;
mod named;
mod opcode;
mod tensor_map;
pub(crate) mod vars;
mod wgmma;
mod wmma;

use crate::decode::body::body;
use crate::decode::ctx::{Ctx, DecodeError};
use crate::decode::vars::{align_up, elem_bytes};
use crate::ir::*;
use crate::parse::Module;
use std::collections::HashMap;

/// Decodes kernel `kernel` of the PTX text `src`.
pub fn decode(src: &str, kernel: &str) -> Result<Program, DecodeError> {
    let module: Module = parse(src)?;
    let Some(entry) = module.entries.iter().find(|e| e.name == kernel) else {
        return Err(DecodeError::NotFound {
            kernel: kernel.to_string(),
            found: module.entries.iter().map(|e| e.name.clone()).collect(),
        });
    };
    let mut cx = Ctx {
        scopes: vec![HashMap::new()],
        symbols: HashMap::new(),
        labels: HashMap::new(),
        label_scopes: vec![0],
        prog: Program {
            files: module.files.clone(),
            ..Program::default()
        },
        shared_uses: vec![],
        call_params: Default::default(),
        funcs: HashMap::new(),
        in_func: false,
    };
    for p in &entry.params {
        let size = p.count.saturating_mul(elem_bytes(&p.ty));
        let at = align_up(
            cx.prog.param_bytes,
            u64::from(p.align).max(elem_bytes(&p.ty)),
        );
        cx.prog.params.push((p.name.clone(), at, size));
        cx.prog.param_bytes = at.saturating_add(size);
        cx.symbols.insert(p.name.clone(), at);
    }
    for v in &module.vars {
        cx.declare_var(v);
    }
    crate::decode::call::decode_funcs(&mut cx, &module, entry)?;
    cx.prog.start = cx.prog.insts.len() as u32;
    body(&mut cx, entry)?;
    cx.prog.access_array = crate::provenance::attribute(&cx.prog, &cx.shared_uses);
    Ok(cx.prog)
}

fn parse(src: &str) -> Result<Module, DecodeError> {
    crate::parse::parse(src).map_err(|e| DecodeError::Bad {
        line: e.line,
        message: e.message,
    })
}
