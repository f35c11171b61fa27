//! Decoding the functions a kernel calls (`call`, device functions, recursion), and the
//! names NVRTC mangles: the decoder gives each reachable function its own body.

use crate::decode::body::body;
use crate::decode::ctx::{Ctx, DecodeError};
use crate::ir::*;
use crate::parse::{Entry, Func as Def, Module, Operand, Stmt, Var};

pub fn reachable<'m>(module: &'m Module, entry: &Entry) -> Vec<&'m Def> {
    fn visit<'m>(m: &'m Module, body: &[Stmt], out: &mut Vec<&'m Def>, seen: &mut Vec<String>) {
        for name in callees(body) {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name.clone());
            if let Some(f) = m.funcs.iter().find(|f| f.def.name == name) {
                visit(m, &f.def.body, out, seen);
                out.push(f);
            }
        }
    }
    let mut out = Vec::new();
    visit(module, &entry.body, &mut out, &mut vec![entry.name.clone()]);
    out
}

/// The names `body` calls.
fn callees(body: &[Stmt]) -> Vec<String> {
    body.iter()
        .filter_map(|s| match s {
            Stmt::Instr {
                opcode, operands, ..
            } if opcode == "call" || opcode.starts_with("call.") => {
                operands.iter().find_map(|o| match o {
                    Operand::Word { w, .. } => Some(w.clone()),
                    _ => None,
                })
            }
            _ => None,
        })
        .collect()
}

/// Decodes the functions `entry` calls, directly or not, into `cx.prog.funcs`.
pub fn decode_funcs(cx: &mut Ctx, module: &Module, entry: &Entry) -> Result<(), DecodeError> {
    let called = reachable(module, entry);
    for (i, f) in called.iter().enumerate() {
        cx.funcs.insert(f.def.name.clone(), i as u32);
    }
    cx.prog.funcs = vec![Func::default(); called.len()];
    for (i, f) in called.iter().enumerate() {
        decode_func(cx, f, i)?;
    }
    Ok(())
}

/// Decodes function `f` as `prog.funcs[index]`.
fn decode_func(cx: &mut Ctx, f: &Def, index: usize) -> Result<(), DecodeError> {
    let (regs, preds, local) = (cx.prog.nregs, cx.prog.npreds, cx.prog.local_bytes);
    cx.scopes.push(Default::default());
    let mut param = |p: &crate::parse::Param| {
        let v = Var {
            space: ".param".into(),
            align: p.align,
            ty: p.ty.clone(),
            name: p.name.clone(),
            count: Some(p.count),
            extern_: false,
            init: vec![],
        };
        cx.declare_var(&v);
        let at = cx.symbols[&p.name];
        (at, cx.prog.local_bytes - at)
    };
    let ret = f.ret.as_ref().map(&mut param);
    let params: Vec<(u64, u64)> = f.def.params.iter().map(&mut param).collect();
    let pc = cx.prog.insts.len() as u32;
    cx.in_func = true;
    let decoded = body(cx, &f.def);
    cx.in_func = false;
    cx.scopes.pop();
    decoded?;
    cx.prog.funcs[index] = Func {
        name: f.def.name.clone(),
        pc,
        regs: regs..cx.prog.nregs,
        preds: preds..cx.prog.npreds,
        local: local..cx.prog.local_bytes,
        params,
        ret,
    };
    Ok(())
}

/// A C++ name as the learner wrote it, for the simple mangled names of free functions
/// (`_Z3fibi` is `fib`); anything else as it is.
pub fn demangle(name: &str) -> String {
    let Some(rest) = name.strip_prefix("_Z") else {
        return name.to_string();
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    match rest[..digits].parse::<usize>() {
        Ok(n) if rest.len() >= digits + n => rest[digits..digits + n].to_string(),
        _ => name.to_string(),
    }
}

/// The C++ name of a function-local static such as a `__shared__` array: NVRTC mangles
/// `sa` in `conv1d` as `_ZZ6conv1dE2sa`; the learner wrote `sa`.
pub fn local_name(mangled: &str) -> &str {
    let Some(rest) = mangled.strip_prefix("_ZZ") else {
        return mangled;
    };
    let Some(e) = rest.rfind('E') else {
        return mangled;
    };
    let tail = &rest[e + 1..];
    let digits = tail.chars().take_while(char::is_ascii_digit).count();
    match tail[..digits].parse::<usize>() {
        Ok(n) if digits > 0 && tail.len() == digits + n => &tail[digits..],
        _ => mangled,
    }
}

#[cfg(test)]
mod tests {
    use super::local_name;

    #[test]
    fn local_statics_read_as_written() {
        assert_eq!(local_name("_ZZ6conv1dE2sa"), "sa");
        assert_eq!(local_name("_ZZ6conv1dE4tile"), "tile");
        assert_eq!(local_name("_ZZ6conv1dPKfE2sb"), "sb");
        assert_eq!(local_name("tile"), "tile");
        assert_eq!(local_name("_ZZ6conv1dE9x"), "_ZZ6conv1dE9x");
    }
}
