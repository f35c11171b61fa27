//! Opcode words to [`Op`]s: `ld.global.nc.v4.f32` becomes `Op::Ld { space: Global, ty: F32, .. }`.
//!
//! One match arm per mnemonic; modifiers are read once here so that `exec` never looks at text.
//! Modifiers that do not change the result on one simulated device (cache hints, memory-order
//! and scope qualifiers, `.aligned`, `.uni`) are accepted and ignored. An unknown mnemonic or a
//! known one with a type or mode this simulator lacks becomes `Op::Unsupported`.

use crate::decode::{Ctx, DecodeError};
use crate::ir::*;
pub use crate::mods::fmods;
use crate::mods::{bool_of, cmp_of};
use crate::parse::Operand;

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
    fn new(text: &'a str, ops: &[Operand], line: u32) -> Self {
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

pub fn decode_op(
    cx: &mut Ctx,
    opcode: &str,
    ops: &[Operand],
    line: u32,
) -> Result<Op, DecodeError> {
    let w = Word::new(opcode, ops, line);
    let (mn, mods, tys, ty) = (w.mn, &w.mods[..], &w.tys, w.ty);
    let has = |m: &str| w.has(m);
    let m = fmods(mods);
    let unsupported = |why: &str| w.unsupported(why);
    let need = |n: usize| w.need(n);
    if let Some(op) = crate::wgmma::decode(cx, &w, ops)? {
        return Ok(op);
    }
    if let Some(op) = crate::mma::decode(cx, &w, ops)? {
        return Ok(op);
    }
    if matches!(ty, Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::B128)
        && !matches!(mn, "cvt" | "mov" | "ld" | "st")
    {
        return unsupported("half-precision and 128-bit arithmetic are not simulated");
    }
    let un = |cx: &mut Ctx, op: Un| -> Result<Op, DecodeError> {
        need(2)?;
        Ok(Op::Un {
            op,
            ty,
            m,
            d: cx.dst(&ops[0], line)?,
            a: cx.src(&ops[1], ty, line)?,
        })
    };
    let bin = |cx: &mut Ctx, op: Bin| -> Result<Op, DecodeError> {
        need(3)?;
        let bty = if matches!(op, Bin::Shl | Bin::Shr) {
            Ty::U32
        } else {
            ty
        };
        Ok(Op::Bin {
            op,
            ty,
            m,
            d: cx.dst(&ops[0], line)?,
            a: cx.src(&ops[1], ty, line)?,
            b: cx.src(&ops[2], bty, line)?,
        })
    };
    let tern = |cx: &mut Ctx, op: Tern| -> Result<Op, DecodeError> {
        need(4)?;
        let (bt, ct) = match op {
            Tern::Bfe => (Ty::U32, Ty::U32),
            Tern::MadWide => (ty, if ty.signed() { Ty::S64 } else { Ty::U64 }),
            _ => (ty, ty),
        };
        Ok(Op::Tern {
            op,
            ty,
            m,
            d: cx.dst(&ops[0], line)?,
            a: cx.src(&ops[1], ty, line)?,
            b: cx.src(&ops[2], bt, line)?,
            c: cx.src(&ops[3], ct, line)?,
        })
    };
    let pred_ty = ty == Ty::Pred;
    Ok(match mn {
        "mov" if pred_ty => {
            need(2)?;
            Op::PredOp {
                op: None,
                not: false,
                d: cx.pdst(&ops[0], line)?,
                a: cx.psrc(&ops[1], line)?,
                b: None,
            }
        }
        "mov" => {
            need(2)?;
            match (&ops[0], &ops[1]) {
                (Operand::Vec(parts), _) => {
                    let n = parts.len().max(1) as u32;
                    let mut ds = Vec::new();
                    for p in parts {
                        ds.push(if p == "_" {
                            None
                        } else {
                            Some(cx.dst(
                                &Operand::Word {
                                    w: p.clone(),
                                    neg: false,
                                    minus: false,
                                },
                                line,
                            )?)
                        });
                    }
                    Op::Unpack {
                        part_bits: ty.bits() / n,
                        ds,
                        a: cx.src(&ops[1], ty, line)?,
                    }
                }
                (_, Operand::Vec(parts)) => {
                    let n = parts.len().max(1) as u32;
                    let mut srcs = Vec::new();
                    for p in parts {
                        srcs.push(cx.src(
                            &Operand::Word {
                                w: p.clone(),
                                neg: false,
                                minus: false,
                            },
                            ty,
                            line,
                        )?);
                    }
                    Op::Pack {
                        part_bits: ty.bits() / n,
                        d: cx.dst(&ops[0], line)?,
                        parts: srcs,
                    }
                }
                _ => un(cx, Un::Mov)?,
            }
        }
        "and" | "or" | "xor" if pred_ty => {
            need(3)?;
            Op::PredOp {
                op: bool_of(mn),
                not: false,
                d: cx.pdst(&ops[0], line)?,
                a: cx.psrc(&ops[1], line)?,
                b: Some(cx.psrc(&ops[2], line)?),
            }
        }
        "not" if pred_ty => {
            need(2)?;
            Op::PredOp {
                op: None,
                not: true,
                d: cx.pdst(&ops[0], line)?,
                a: cx.psrc(&ops[1], line)?,
                b: None,
            }
        }
        "neg" => un(cx, Un::Neg)?,
        "abs" => un(cx, Un::Abs)?,
        "not" => un(cx, Un::Not)?,
        "cnot" => un(cx, Un::Cnot)?,
        "popc" => un(cx, Un::Popc)?,
        "clz" => un(cx, Un::Clz)?,
        "brev" => un(cx, Un::Brev)?,
        "bfind" => un(
            cx,
            if has("shiftamt") {
                Un::BfindShift
            } else {
                Un::Bfind
            },
        )?,
        "sqrt" => un(cx, Un::Sqrt)?,
        "rsqrt" => un(cx, Un::Rsqrt)?,
        "rcp" => un(cx, Un::Rcp)?,
        "ex2" => un(cx, Un::Ex2)?,
        "lg2" => un(cx, Un::Lg2)?,
        "sin" => un(cx, Un::Sin)?,
        "cos" => un(cx, Un::Cos)?,
        "tanh" => un(cx, Un::Tanh)?,
        "add" if has("sat") && !ty.float() => bin(cx, Bin::AddSat)?,
        "sub" if has("sat") && !ty.float() => bin(cx, Bin::SubSat)?,
        "add" => bin(cx, Bin::Add)?,
        "sub" => bin(cx, Bin::Sub)?,
        "mul" if has("hi") => bin(cx, Bin::MulHi)?,
        "mul" if has("wide") => bin(cx, Bin::MulWide)?,
        "mul" => bin(cx, Bin::MulLo)?,
        "div" => bin(cx, Bin::Div)?,
        "rem" => bin(cx, Bin::Rem)?,
        "min" => bin(cx, Bin::Min)?,
        "max" => bin(cx, Bin::Max)?,
        "and" => bin(cx, Bin::And)?,
        "or" => bin(cx, Bin::Or)?,
        "xor" => bin(cx, Bin::Xor)?,
        "shl" => bin(cx, Bin::Shl)?,
        "shr" => bin(cx, Bin::Shr)?,
        "copysign" => bin(cx, Bin::Copysign)?,
        "mad" if ty.float() => tern(cx, Tern::Fma)?,
        "mad" if has("hi") => tern(cx, Tern::MadHi)?,
        "mad" if has("wide") => tern(cx, Tern::MadWide)?,
        "mad" => tern(cx, Tern::MadLo)?,
        "fma" => tern(cx, Tern::Fma)?,
        "bfe" => tern(cx, Tern::Bfe)?,
        "sad" => tern(cx, Tern::Sad)?,
        "dp4a" | "dp2a" => {
            need(4)?;
            let signed = |i: usize| w.tys.get(i).is_some_and(|t| t.signed());
            let (a_signed, b_signed) = (signed(0), signed(1));
            let op = if mn == "dp4a" {
                Tern::Dp4a { a_signed, b_signed }
            } else {
                Tern::Dp2a {
                    hi: has("hi"),
                    a_signed,
                    b_signed,
                }
            };
            let ty = if a_signed || b_signed {
                Ty::S32
            } else {
                Ty::U32
            };
            Op::Tern {
                op,
                ty,
                m,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], Ty::B32, line)?,
                b: cx.src(&ops[2], Ty::B32, line)?,
                c: cx.src(&ops[3], ty, line)?,
            }
        }
        "fns" => {
            need(4)?;
            Op::Tern {
                op: Tern::Fns,
                ty: Ty::B32,
                m,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], Ty::B32, line)?,
                b: cx.src(&ops[2], Ty::U32, line)?,
                c: cx.src(&ops[3], Ty::S32, line)?,
            }
        }
        "shf" => {
            let op = Tern::Shf {
                left: has("l"),
                clamp: has("clamp"),
            };
            tern(cx, op)?
        }
        "prmt" if mods.len() == 1 => tern(cx, Tern::Prmt)?,
        "bfi" => {
            need(5)?;
            Op::Bfi {
                ty,
                d: cx.dst(&ops[0], line)?,
                f: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
                pos: cx.src(&ops[3], Ty::U32, line)?,
                len: cx.src(&ops[4], Ty::U32, line)?,
            }
        }
        "setp" => {
            need(3)?;
            let Some(cmp) = mods.first().and_then(|c| cmp_of(c)) else {
                return unsupported("comparison");
            };
            let (p, q) = match &ops[0] {
                Operand::Pair(a, b) => (cx.pname(a, line)?, Some(cx.pname(b, line)?)),
                o => (cx.pdst(o, line)?, None),
            };
            let comb = match mods.get(1).and_then(|b| bool_of(b)) {
                Some(b) => {
                    need(4)?;
                    Some((b, cx.psrc(&ops[3], line)?))
                }
                None => None,
            };
            Op::Setp {
                cmp,
                ty,
                ftz: m.ftz,
                p,
                q,
                a: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
                comb,
            }
        }
        "set" if tys.len() == 2 && mods.len() == 3 => {
            need(3)?;
            let Some(cmp) = cmp_of(mods[0]) else {
                return unsupported("comparison");
            };
            Op::Set {
                cmp,
                ty,
                dty: tys[0],
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
            }
        }
        "selp" => {
            need(4)?;
            Op::Selp {
                ty,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], ty, line)?,
                b: cx.src(&ops[2], ty, line)?,
                p: cx.psrc(&ops[3], line)?,
            }
        }
        "cvt" if tys.len() == 2 && !has("pack") && !has("relu") => {
            need(2)?;
            Op::Cvt {
                dty: tys[0],
                sty: tys[1],
                m,
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], tys[1], line)?,
            }
        }
        _ => return crate::opcode_mem::decode_mem(cx, &w, ops),
    })
}
