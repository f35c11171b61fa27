//! The statements of one body (a kernel's or a device function's) to instructions, after those
//! decoded so far: labels to indices, variables laid out, each instruction handed to `opcode`.

use crate::decode::ctx::{Ctx, DecodeError, Name};
use crate::decode::opcode::decode_op;
use crate::decode::vars::align_up;
use crate::ir::*;
use crate::parse::{Entry, Operand, Stmt};
use std::collections::HashMap;

/// Decodes the statements of `entry` (a kernel or a device function) after the instructions
/// decoded so far.
pub fn body(cx: &mut Ctx, entry: &Entry) -> Result<(), DecodeError> {
    cx.labels.clear();
    let mut n = cx.prog.insts.len() as u32;
    let (mut open, mut next) = (vec![0u32], 0u32);
    for s in &entry.body {
        match s {
            Stmt::Open => {
                next += 1;
                open.push(next);
            }
            Stmt::Close if open.len() > 1 => _ = open.pop(),
            Stmt::Label(l) => _ = cx.labels.insert(format!("{}:{l}", open[open.len() - 1]), n),
            Stmt::Instr { .. } => n += 1,
            Stmt::Var(v) => cx.declare_var(v),
            _ => {}
        }
    }
    // The dynamic shared array follows the static ones, 16-byte aligned.
    let dyn_at = align_up(cx.prog.static_shared, 16);
    cx.prog.dyn_shared_offset = dyn_at;
    for a in cx.symbols.values_mut() {
        if *a == u64::MAX {
            *a = dyn_at;
        }
    }
    let (mut file, mut line, mut call, mut call_file, mut pragma) = (0u32, 0u32, 0u32, 0u32, None);
    let mut via = 0u32;
    (next, cx.label_scopes) = (0, vec![0]);
    // The registers each instruction names, and those `wgmma.mma_async` uses asynchronously.
    // Only a function with a `wgmma` collects them.
    let hopper = entry
        .body
        .iter()
        .any(|s| matches!(s, Stmt::Instr { opcode, .. } if opcode.starts_with("wgmma")));
    let first = cx.prog.insts.len();
    let (mut named, mut async_regs) = (Vec::new(), std::collections::HashSet::new());
    for s in &entry.body {
        match s {
            Stmt::Pragma(text) => pragma = Some(text.as_str()),
            Stmt::Reg { ty, names } => {
                for name in names {
                    let n = if ty == ".pred" {
                        cx.prog.npreds += 1;
                        Name::Pred(cx.prog.npreds - 1)
                    } else {
                        cx.prog.nregs += 1;
                        Name::Reg(cx.prog.nregs - 1)
                    };
                    if let Some(scope) = cx.scopes.last_mut() {
                        scope.insert(name.clone(), n);
                    }
                }
            }
            Stmt::Open => {
                cx.scopes.push(HashMap::new());
                next += 1;
                cx.label_scopes.push(next);
            }
            Stmt::Close => {
                if cx.scopes.len() > 1 {
                    cx.scopes.pop();
                }
                if cx.label_scopes.len() > 1 {
                    cx.label_scopes.pop();
                }
            }
            Stmt::Loc {
                file: f,
                line: l,
                call: c,
                call_file: cf,
                via: v,
            } => {
                (file, line, call, call_file) = (*f, *l, *c, *cf);
                via = match v.is_empty() {
                    true => 0,
                    false if cx.prog.vias.last() == Some(v) => cx.prog.vias.len() as u32,
                    false => {
                        cx.prog.vias.push(v.clone());
                        cx.prog.vias.len() as u32
                    }
                };
            }
            Stmt::Instr {
                guard,
                opcode,
                operands,
                line: ptx_line,
            } => {
                let guard = match guard {
                    Some((p, neg)) => Some((cx.pname(p, *ptx_line)?, *neg)),
                    None => None,
                };
                let mut op = decode_op(cx, opcode, operands, *ptx_line)?;
                if hopper {
                    if let Op::Wgmma(w) = &op {
                        async_regs.extend(w.async_regs());
                        named.push(Vec::new());
                    } else {
                        named.push(register_names(cx, operands));
                    }
                }
                crate::decode::opcode::apply_pragma(&mut op, pragma.take());
                cx.prog.texts.push(opcode.clone());
                let text = cx.prog.texts.len() as u32 - 1;
                cx.prog.insts.push(Inst {
                    guard,
                    op,
                    file,
                    line,
                    call,
                    call_file,
                    via,
                    text,
                    wgmma_sync: false,
                });
            }
            Stmt::Label(_) | Stmt::Var(_) => {}
        }
    }
    if !async_regs.is_empty() {
        for (inst, regs) in cx.prog.insts[first..].iter_mut().zip(named) {
            inst.wgmma_sync = regs.iter().any(|r| async_regs.contains(r));
        }
    }
    Ok(())
}

/// The register slots an instruction's operands name.
fn register_names(cx: &Ctx, operands: &[Operand]) -> Vec<Slot> {
    let mut names: Vec<&str> = Vec::new();
    for o in operands {
        match o {
            Operand::Word { w, .. } => names.push(w),
            Operand::Addr { base: Some(b), .. } => names.push(b),
            Operand::Addr { base: None, .. } => {}
            Operand::Vec(v) => names.extend(v.iter().map(String::as_str)),
            Operand::Pair(a, b) => names.extend([a.as_str(), b.as_str()]),
            Operand::Tensor { base, coords, .. } => {
                names.extend(base.iter().map(String::as_str));
                names.extend(coords.iter().map(String::as_str));
            }
        }
    }
    names
        .into_iter()
        .filter_map(|n| match cx.lookup(n) {
            Some(Name::Reg(s)) => Some(s),
            _ => None,
        })
        .collect()
}
