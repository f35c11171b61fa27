//! Tensor-core instructions and the half-precision operations around them, decoded once into a
//! [`MmaOp`] (one `Op::Mma` variant of the IR): `mma.sync.aligned` m16n8k8 tf32 and m16n8k16
//! f16/bf16 with f32 accumulators, `wmma` (see `wmma`), `ldmatrix`, `cvt` to tf32 and to packed halves, and
//! half-precision arithmetic. Fragments are ordinary registers; `mma_step` executes these ops
//! (the collectives over the whole warp) and `mma_num` holds the numerics.
//!
//! `decode` claims an instruction by its opcode word and returns `None` for every other one, so
//! `opcode` needs one line to hand them here. A known instruction in a form not simulated
//! (another shape, f16 accumulators) becomes `Op::Unsupported` naming it.

use crate::decode::{Ctx, DecodeError};
use crate::ir::*;
use crate::opcode::Word;
use crate::opcode_mem::space_of;
use crate::parse::Operand;

/// A decoded tensor-core or half-precision instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum MmaOp {
    /// `mma.sync.aligned.m16n8k{8,16}.row.col.f32.E.E.f32 {d}, {a}, {b}, {c}`.
    Mma {
        elem: Elem,
        k: u32,
        d: [Slot; 4],
        a: [Src; 4],
        b: [Src; 2],
        c: [Src; 4],
    },
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 {d}, [addr]`.
    Ldmatrix {
        trans: bool,
        space: Space,
        ds: Vec<Slot>,
        addr: Addr,
    },
    /// Half-precision arithmetic; `x2` for the packed forms.
    Half {
        op: HalfOp,
        ty: Ty,
        x2: bool,
        m: FMods,
        d: Slot,
        srcs: [Src; 3],
    },
    /// `cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b`.
    Pack {
        ty: Ty,
        relu: bool,
        d: Slot,
        a: Src,
        b: Src,
    },
    /// `wmma.load.{a,b,c}`: a fragment from memory (see `wmma` for who holds what).
    WmmaLoad {
        frag: crate::wmma::Frag,
        elem: Elem,
        row: bool,
        space: Space,
        ds: Vec<Slot>,
        addr: Addr,
        stride: Option<Src>,
    },
    /// `wmma.store.d`: an f32 accumulator fragment to memory.
    WmmaStore {
        row: bool,
        space: Space,
        srcs: Vec<Src>,
        addr: Addr,
        stride: Option<Src>,
    },
    /// `wmma.mma`: D = A B + C over fragments (the layouts only say how they were loaded).
    WmmaMma {
        elem: Elem,
        d: Vec<Slot>,
        a: Vec<Src>,
        b: Vec<Src>,
        c: Vec<Src>,
    },
    /// `cvt.{rna,rn,rz}.tf32.f32 d, a`.
    Tf32 {
        away: bool,
        even: bool,
        d: Slot,
        a: Src,
    },
}

fn word(name: &str) -> Operand {
    Operand::Word {
        w: name.to_string(),
        neg: false,
        minus: false,
    }
}

/// The registers of a `{...}` operand, exactly `N` of them.
fn regs<const N: usize>(cx: &mut Ctx, o: &Operand, line: u32) -> Result<[Src; N], DecodeError> {
    let names = match o {
        Operand::Vec(v) if v.len() == N => v,
        _ => {
            return cx.bad(
                line,
                format!("expected a vector of {N} registers, found {o:?}"),
            );
        }
    };
    let mut out = [Src::Imm(0); N];
    for (i, n) in names.iter().enumerate() {
        out[i] = cx.src(&word(n), Ty::B32, line)?;
    }
    Ok(out)
}

fn dsts(cx: &mut Ctx, o: &Operand, line: u32) -> Result<Vec<Slot>, DecodeError> {
    let names: Vec<String> = match o {
        Operand::Vec(v) => v.clone(),
        Operand::Word { w, .. } => vec![w.clone()],
        _ => return cx.bad(line, format!("expected destination registers, found {o:?}")),
    };
    names.iter().map(|n| cx.dst(&word(n), line)).collect()
}

/// The instruction as a tensor-core or half-precision op, or `None` when it is neither.
pub fn decode(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Option<Op>, DecodeError> {
    let line = w.line;
    let boxed = |m: MmaOp| Ok(Some(Op::Mma(Box::new(m))));
    let halves = |m: &str| match m {
        "f16" => Some((Ty::F16, false)),
        "f16x2" => Some((Ty::F16, true)),
        "bf16" => Some((Ty::BF16, false)),
        "bf16x2" => Some((Ty::BF16, true)),
        _ => None,
    };
    match w.mn {
        "wmma" => crate::wmma::decode(cx, w, ops).map(Some),
        "mma" => {
            let shape = w.mods.iter().find(|m| m.starts_with('m')).copied();
            let elem = match (shape, w.mods.as_slice()) {
                (Some("m16n8k8"), [.., "f32", "tf32", "tf32", "f32"]) => Elem::Tf32,
                (Some("m16n8k16"), [.., "f32", "f16", "f16", "f32"]) => Elem::F16,
                (Some("m16n8k16"), [.., "f32", "bf16", "bf16", "f32"]) => Elem::Bf16,
                _ => {
                    return w
                        .unsupported("of `mma` it runs m16n8k8 tf32 and m16n8k16 f16/bf16 with f32 accumulators")
                        .map(Some);
                }
            };
            if !(w.has("row") && w.has("col")) {
                return w.unsupported("these shapes take `.row.col`").map(Some);
            }
            w.need(4)?;
            let Ok(d) = <[Slot; 4]>::try_from(dsts(cx, &ops[0], line)?) else {
                return cx.bad(line, "`mma` writes a vector of 4 registers");
            };
            boxed(MmaOp::Mma {
                elem,
                k: if elem == Elem::Tf32 { 8 } else { 16 },
                d,
                a: regs::<4>(cx, &ops[1], line)?,
                b: regs::<2>(cx, &ops[2], line)?,
                c: regs::<4>(cx, &ops[3], line)?,
            })
        }
        "ldmatrix" => {
            w.need(2)?;
            let n = match () {
                _ if w.has("x1") => 1,
                _ if w.has("x2") => 2,
                _ if w.has("x4") => 4,
                _ => return cx.bad(line, "`ldmatrix` needs `.x1`, `.x2` or `.x4`"),
            };
            if !w.has("m8n8") || !w.has("b16") {
                return w
                    .unsupported("of `ldmatrix` it runs `.m8n8` of `.b16`")
                    .map(Some);
            }
            let ds = dsts(cx, &ops[0], line)?;
            if ds.len() != n {
                return cx.bad(line, format!("`ldmatrix .x{n}` writes {n} registers"));
            }
            let space = match space_of(&w.mods) {
                Space::Generic => Space::Shared,
                s => s,
            };
            boxed(MmaOp::Ldmatrix {
                trans: w.has("trans"),
                space,
                ds,
                addr: cx.addr(&ops[1], line)?,
            })
        }
        "cvt" if w.has("tf32") => {
            w.need(2)?;
            if !w.mods.ends_with(&["tf32", "f32"]) || w.has("satfinite") || w.has("relu") {
                return w
                    .unsupported("of conversions to tf32 it runs `cvt.{rna,rn,rz}.tf32.f32`")
                    .map(Some);
            }
            boxed(MmaOp::Tf32 {
                away: w.has("rna"),
                even: w.has("rn"),
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], Ty::F32, line)?,
            })
        }
        "cvt" if w.has("f16x2") || w.has("bf16x2") => {
            w.need(3)?;
            if !w.has("rn") || !w.mods.ends_with(&["f32"]) || w.has("satfinite") {
                return w
                    .unsupported(
                        "of packing conversions it runs `cvt.rn{.relu}.{f16x2,bf16x2}.f32`",
                    )
                    .map(Some);
            }
            boxed(MmaOp::Pack {
                ty: if w.has("bf16x2") { Ty::BF16 } else { Ty::F16 },
                relu: w.has("relu"),
                d: cx.dst(&ops[0], line)?,
                a: cx.src(&ops[1], Ty::F32, line)?,
                b: cx.src(&ops[2], Ty::F32, line)?,
            })
        }
        mn => {
            let (Some(op), Some((ty, x2))) = (
                HalfOp::parse(mn),
                w.mods.iter().rev().find_map(|m| halves(m)),
            ) else {
                return Ok(None);
            };
            let known = [
                "rn", "rz", "rm", "rp", "ftz", "sat", "f16", "f16x2", "bf16", "bf16x2",
            ];
            if let Some(m) = w.mods.iter().find(|m| !known.contains(m)) {
                return w
                    .unsupported(&format!("of half-precision arithmetic it runs no `.{m}`"))
                    .map(Some);
            }
            let n = op.arity();
            w.need(n + 1)?;
            let mut srcs = [Src::Imm(0); 3];
            for (i, s) in srcs.iter_mut().enumerate().take(n) {
                *s = cx.src(&ops[i + 1], Ty::B32, line)?;
            }
            boxed(MmaOp::Half {
                op,
                ty,
                x2,
                m: crate::opcode::fmods(&w.mods),
                d: cx.dst(&ops[0], line)?,
                srcs,
            })
        }
    }
}

/// A half-precision operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfOp {
    Add,
    Sub,
    Mul,
    Fma,
    Neg,
    Abs,
    Min,
    Max,
}

impl HalfOp {
    pub fn parse(mn: &str) -> Option<HalfOp> {
        Some(match mn {
            "add" => HalfOp::Add,
            "sub" => HalfOp::Sub,
            "mul" => HalfOp::Mul,
            "fma" => HalfOp::Fma,
            "neg" => HalfOp::Neg,
            "abs" => HalfOp::Abs,
            "min" => HalfOp::Min,
            "max" => HalfOp::Max,
            _ => return None,
        })
    }
    /// Source operands the operation reads.
    pub fn arity(self) -> usize {
        match self {
            HalfOp::Neg | HalfOp::Abs => 1,
            HalfOp::Fma => 3,
            _ => 2,
        }
    }
}

/// An operand format of the tensor cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Tf32,
    F16,
    Bf16,
}

impl Elem {
    /// Bits per element in a register (tf32 takes a whole word).
    pub fn bits(self) -> u32 {
        if self == Elem::Tf32 { 32 } else { 16 }
    }
}
