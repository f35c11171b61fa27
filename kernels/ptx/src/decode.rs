//! Decode one parsed kernel into a [`Program`]: lay out the state spaces, resolve register names
//! to slots (inline-asm `{ }` scopes shadow outer names), symbols to addresses and labels to
//! instruction indices.
//!
//! An instruction this simulator does not know is not an error here: it decodes to
//! `Op::Unsupported`, which stops the run only if a thread reaches it (a `printf` in dead code
//! does no harm). Malformed operands of a known instruction are errors with the PTX line.

use crate::ir::*;
use crate::opcode::decode_op;
use crate::parse::{Entry, Module, Operand, Stmt, parse_int};
pub use crate::types::imm_bits;
pub use crate::vars::init_bytes;
use crate::vars::{align_up, elem_bytes};
use std::collections::HashMap;

/// Why a kernel could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    NotFound { kernel: String, found: Vec<String> },
    Bad { line: u32, message: String },
}

#[derive(Clone, Copy)]
pub enum Name {
    Reg(Slot),
    Pred(PSlot),
}

/// Register scopes and symbol addresses while one kernel is decoded.
pub struct Ctx {
    pub scopes: Vec<HashMap<String, Name>>,
    pub symbols: HashMap<String, u64>,
    /// Labels by `scope:name`: an inline-asm `{ }` scope has labels of its own, so the same
    /// asm inlined twice names two loops, each branch finding its own scope's label first.
    pub labels: HashMap<String, u32>,
    /// The scopes (ids, outermost 0) around the instruction being decoded, for [`Ctx::label`].
    pub label_scopes: Vec<u32>,
    pub prog: Program,
    /// Shared symbols named by instructions, for `provenance`.
    pub shared_uses: Vec<(u32, u32, bool)>,
    /// `.param` variables declared in the body: a call's arguments and return value, laid out in
    /// local memory (the kernel's own parameters are not among them).
    pub call_params: std::collections::HashSet<String>,
    /// Device functions by name: their index in `prog.funcs`.
    pub funcs: HashMap<String, u32>,
    /// Whether the body being decoded is a device function's (`ret` returns) or the kernel's
    /// (`ret` exits).
    pub in_func: bool,
}

impl Ctx {
    pub fn bad<T>(&self, line: u32, message: impl Into<String>) -> Result<T, DecodeError> {
        Err(DecodeError::Bad {
            line,
            message: message.into(),
        })
    }

    pub fn lookup(&self, name: &str) -> Option<Name> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn special(&mut self, name: &str) -> Option<Slot> {
        let sp = Special::parse(name)?;
        if let Some(&(slot, _)) = self.prog.specials.iter().find(|(_, s)| *s == sp) {
            return Some(slot);
        }
        let slot = self.prog.nregs;
        self.prog.nregs += 1;
        self.prog.specials.push((slot, sp));
        Some(slot)
    }

    /// A source operand read as type `ty`.
    pub fn src(&mut self, o: &Operand, ty: Ty, line: u32) -> Result<Src, DecodeError> {
        let Operand::Word { w, minus, .. } = o else {
            return self.bad(line, format!("expected a register or value, found {o:?}"));
        };
        if let Some(Name::Reg(s)) = self.lookup(w) {
            if *minus {
                return self.bad(line, "a negated register operand");
            }
            return Ok(Src::Reg(s));
        }
        if matches!(
            w.as_str(),
            "%clock" | "%clock64" | "%globaltimer" | "%globaltimer_lo"
        ) {
            return Ok(Src::Clock);
        }
        if let Some(s) = self.special(w) {
            return Ok(Src::Reg(s));
        }
        if let Some(&a) = self.symbols.get(w.as_str()) {
            self.note_shared(w, false);
            return Ok(Src::Imm(a));
        }
        let text = if *minus { format!("-{w}") } else { w.clone() };
        match imm_bits(&text, ty) {
            Some(b) => Ok(Src::Imm(b)),
            None => self.bad(line, format!("unknown register or symbol `{w}`")),
        }
    }

    pub fn dst(&mut self, o: &Operand, line: u32) -> Result<Slot, DecodeError> {
        match o {
            Operand::Word { w, .. } => match self.lookup(w) {
                Some(Name::Reg(s)) => Ok(s),
                _ => self.bad(line, format!("`{w}` is not a declared register")),
            },
            _ => self.bad(
                line,
                format!("expected a destination register, found {o:?}"),
            ),
        }
    }

    pub fn pname(&self, w: &str, line: u32) -> Result<PSlot, DecodeError> {
        match self.lookup(w) {
            Some(Name::Pred(p)) => Ok(p),
            _ => self.bad(line, format!("`{w}` is not a declared predicate")),
        }
    }

    pub fn pdst(&self, o: &Operand, line: u32) -> Result<PSlot, DecodeError> {
        match o {
            Operand::Word { w, .. } => self.pname(w, line),
            _ => self.bad(line, format!("expected a predicate, found {o:?}")),
        }
    }

    pub fn psrc(&self, o: &Operand, line: u32) -> Result<PSrc, DecodeError> {
        match o {
            Operand::Word { w, neg, .. } => match self.lookup(w) {
                Some(Name::Pred(p)) => Ok(PSrc::Slot(p, *neg)),
                _ => match parse_int(w) {
                    Some(v) => Ok(PSrc::Const((v != 0) != *neg)),
                    None => self.bad(line, format!("`{w}` is not a predicate")),
                },
            },
            _ => self.bad(line, format!("expected a predicate, found {o:?}")),
        }
    }

    pub fn addr(&mut self, o: &Operand, line: u32) -> Result<Addr, DecodeError> {
        let Operand::Addr { base, off } = o else {
            return self.bad(line, format!("expected an address `[...]`, found {o:?}"));
        };
        match base {
            None => Ok(Addr {
                base: None,
                off: *off,
            }),
            Some(b) => match self.lookup(b) {
                Some(Name::Reg(s)) => Ok(Addr {
                    base: Some(s),
                    off: *off,
                }),
                _ => match self.symbols.get(b.as_str()).copied() {
                    Some(a) => {
                        self.note_shared(b, true);
                        Ok(Addr {
                            base: None,
                            off: (a as i64).wrapping_add(*off),
                        })
                    }
                    None => self.bad(line, format!("unknown address base `{b}`")),
                },
            },
        }
    }

    pub fn label(&self, w: &str, line: u32) -> Result<u32, DecodeError> {
        let found = self
            .label_scopes
            .iter()
            .rev()
            .find_map(|s| self.labels.get(&format!("{s}:{w}")));
        match found {
            Some(&i) => Ok(i),
            None => self.bad(line, format!("unknown label `{w}`")),
        }
    }
}

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
    crate::call::decode_funcs(&mut cx, &module, entry)?;
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
                crate::opcode_mem::apply_pragma(&mut op, pragma.take());
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
