//! Decoding `wmma.load`, `wmma.mma` and `wmma.store`, and the fragment layout both the decoder
//! and the simulator read (which lane holds which element; `sim::wmma` runs them).

use crate::decode::ctx::{Ctx, DecodeError, Word, space_of};
use crate::ir::*;
use crate::parse::Operand;

/// The operand format; for the accumulator's load and store (no operand type named) the
/// shape's, which only sets a default stride.
fn elem_of(w: &Word<'_>) -> Option<Elem> {
    match () {
        _ if w.has("tf32") || w.has("m16n16k8") => Some(Elem::Tf32),
        _ if w.has("bf16") => Some(Elem::Bf16),
        _ if w.has("m16n16k16") => Some(Elem::F16),
        _ => None,
    }
}

fn srcs(cx: &mut Ctx, o: &Operand, n: usize, line: u32) -> Result<Vec<Src>, DecodeError> {
    match o {
        Operand::Vec(v) if v.len() == n => v
            .iter()
            .map(|r| {
                let w = Operand::Word {
                    w: r.clone(),
                    neg: false,
                    minus: false,
                };
                cx.src(&w, Ty::B32, line)
            })
            .collect(),
        _ => cx.bad(
            line,
            format!("expected a fragment of {n} registers, found {o:?}"),
        ),
    }
}

/// `wmma.load`, `wmma.store` and `wmma.mma`.
pub fn decode(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    let shape_ok = w.has("m16n16k8") || w.has("m16n16k16");
    // The accumulator's types (load.c and store: the last; mma: the first and the last).
    let tys: Vec<&str> = w
        .mods
        .iter()
        .copied()
        .filter(|m| Ty::parse(m).is_some() || *m == "tf32")
        .collect();
    let op = w.mods.first().copied().unwrap_or_default();
    let f32_acc = match op {
        "load" if !w.has("c") => true,
        "mma" => tys.first() == Some(&"f32") && tys.last() == Some(&"f32"),
        _ => tys.last() == Some(&"f32"),
    };
    let (Some(elem), true, true) = (elem_of(w), shape_ok, f32_acc) else {
        return w.unsupported(
            "of `wmma` it runs tf32 m16n16k8 and f16/bf16 m16n16k16 with f32 accumulators",
        );
    };
    let row = w.has("row");
    let space = space_of(&w.mods);
    let stride = |cx: &mut Ctx, o: Option<&Operand>| match o {
        Some(o) => cx.src(o, Ty::U32, line).map(Some),
        None => Ok(None),
    };
    let op = match op {
        "load" => {
            w.need(2)?;
            let frag = match () {
                _ if w.has("a") => Frag::A,
                _ if w.has("b") => Frag::B,
                _ => Frag::C,
            };
            let n = count(frag, elem) / per_reg(frag, elem);
            let ds: Vec<Src> = srcs(cx, &ops[0], n, line)?;
            let ds = ds
                .into_iter()
                .map(|s| match s {
                    Src::Reg(r) => Ok(r),
                    _ => cx.bad(line, "a fragment is written to registers"),
                })
                .collect::<Result<Vec<Slot>, _>>()?;
            MmaOp::WmmaLoad {
                frag,
                elem,
                row,
                space,
                ds,
                addr: cx.addr(&ops[1], line)?,
                stride: stride(cx, ops.get(2))?,
            }
        }
        "store" => {
            w.need(2)?;
            MmaOp::WmmaStore {
                row,
                space,
                srcs: srcs(cx, &ops[1], 8, line)?,
                addr: cx.addr(&ops[0], line)?,
                stride: stride(cx, ops.get(2))?,
            }
        }
        "mma" => {
            w.need(4)?;
            let layouts: Vec<bool> = w
                .mods
                .iter()
                .filter(|m| matches!(**m, "row" | "col"))
                .map(|m| *m == "row")
                .collect();
            let na = count(Frag::A, elem) / per_reg(Frag::A, elem);
            let nb = count(Frag::B, elem) / per_reg(Frag::B, elem);
            let d = srcs(cx, &ops[0], 8, line)?;
            let d: Vec<Slot> = d
                .into_iter()
                .filter_map(|s| if let Src::Reg(r) = s { Some(r) } else { None })
                .collect();
            if d.len() != 8 || layouts.len() != 2 {
                return cx.bad(
                    line,
                    "`wmma.mma` needs two layouts and 8 destination registers",
                );
            }
            MmaOp::WmmaMma {
                elem,
                d,
                a: srcs(cx, &ops[1], na, line)?,
                b: srcs(cx, &ops[2], nb, line)?,
                c: srcs(cx, &ops[3], 8, line)?,
            }
        }
        _ => return w.unsupported("of `wmma` it runs load, mma and store"),
    };
    Ok(Op::Mma(Box::new(op)))
}
