//! Tensor-core instructions and the half-precision operations around them, decoded once into a
//! [`MmaOp`] (one `Op::Mma` variant of the IR): `mma.sync.aligned` m16n8k8 tf32 and m16n8k16
//! f16/bf16 with f32 accumulators, `wmma` (see `wmma`), `ldmatrix`, `cvt` to tf32 and to packed halves, and
//! half-precision arithmetic. Fragments are ordinary registers; `mma_step` executes these ops
//! (the collectives over the whole warp) and `mma_num` holds the numerics.
//!
//! `decode` claims an instruction by its opcode word and returns `None` for every other one, so
//! `opcode` needs one line to hand them here. A known instruction in a form not simulated
//! (another shape, f16 accumulators) becomes `Op::Unsupported` naming it.

use crate::decode::ctx::space_of;
use crate::decode::ctx::{Ctx, DecodeError, Word};
use crate::ir::*;
use crate::parse::Operand;

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
        "wmma" => crate::decode::wmma::decode(cx, w, ops).map(Some),
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
                m: crate::decode::mods::fmods(&w.mods),
                d: cx.dst(&ops[0], line)?,
                srcs,
            })
        }
    }
}
