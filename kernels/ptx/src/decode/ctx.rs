//! What every decoder of an instruction family shares, and nothing that dispatches: the state of
//! one kernel's decoding ([`Ctx`]: register scopes, symbols, labels, the program so far), the
//! error ([`DecodeError`]), and one instruction's opcode word split once ([`Word`]).

use crate::ir::*;
use crate::parse::{Operand, parse_int};
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

/// One instruction's opcode word, split once for `decode_op` and `decode_mem`: the mnemonic, its
/// modifiers, the types they name (`cvt.f32.s32` names two), and the last of those (`b32` when none
/// is named).
pub struct Word<'a> {
    pub text: &'a str,
    pub mn: &'a str,
    pub mods: Vec<&'a str>,
    pub tys: Vec<Ty>,
    pub ty: Ty,
    pub line: u32,
    ops: usize,
}

impl<'a> Word<'a> {
    pub fn new(text: &'a str, ops: &[Operand], line: u32) -> Self {
        let mut parts = text.split('.');
        let mn = parts.next().unwrap_or_default();
        let mods: Vec<&str> = parts.collect();
        let tys: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
        let ty = tys.last().copied().unwrap_or(Ty::B32);
        Word {
            text,
            mn,
            mods,
            tys,
            ty,
            line,
            ops: ops.len(),
        }
    }

    pub fn has(&self, m: &str) -> bool {
        self.mods.contains(&m)
    }

    /// An error unless the instruction has at least `n` operands.
    pub fn need(&self, n: usize) -> Result<(), DecodeError> {
        if self.ops < n {
            return Err(DecodeError::Bad {
                line: self.line,
                message: format!("`{}` needs {n} operands", self.text),
            });
        }
        Ok(())
    }

    /// The instruction, known but in a form this simulator lacks, for the reason `why`.
    pub fn unsupported(&self, why: &str) -> Result<Op, DecodeError> {
        Ok(Op::Unsupported {
            why: format!("`{}` ({why})", self.text),
        })
    }
}

pub fn space_of(mods: &[&str]) -> Space {
    for m in mods {
        match *m {
            "global" => return Space::Global,
            "shared" | "shared::cta" => return Space::Shared,
            "const" => return Space::Const,
            "param" | "param::entry" => return Space::Param,
            "local" => return Space::Local,
            _ => {}
        }
    }
    Space::Generic
}

impl Ctx {
    /// Notes that the instruction being decoded names symbol `name` (`addr`: as its address),
    /// for `provenance` to attribute the access to its array.
    pub fn note_shared(&mut self, name: &str, addr: bool) {
        let p = &self.prog;
        let array = match p.shared.iter().position(|s| s.name == name) {
            Some(i) => i as u32,
            None if p.dyn_shared_name.as_deref() == Some(name) => p.shared.len() as u32,
            None => return,
        };
        self.shared_uses.push((p.insts.len() as u32, array, addr));
    }
}
