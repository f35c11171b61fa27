//! `wmma`: the fragments of `nvcuda::wmma` (mma.h) as PTX `wmma.load`, `wmma.mma` and
//! `wmma.store`, for tf32 m16n16k8 and f16/bf16 m16n16k16 with f32 accumulators, row or column
//! layouts, in any state space, with an optional stride.
//!
//! The PTX ISA leaves which lane holds which element of a `wmma` fragment to the
//! implementation; a kernel that reads `frag.x[i]` sees the hardware's choice, so this module
//! follows the mapping measured on the GPU (Hopper; the same lowering as Ampere's, onto
//! `mma.m16n8k8`/`m16n8k16`): with g = lane / 4 and t = lane % 4, element i of
//! - tf32 A (16 x 8): (g + 8 (i % 2), t + 4 (i / 2));
//! - tf32 B (8 x 16): (t + 4 (i % 2), g + 8 (i / 2));
//! - f16/bf16 A (16 x 16), j = i % 8, register j / 2: (g + 8 (j / 2 % 2), 2t + j % 2 + 8 (j / 4));
//! - f16/bf16 B (16 x 16): (2t + j % 2 + 8 (j / 2 % 2), g + 8 (j / 4));
//! - bf16 fragments have those 8 elements (4 registers); f16 ones 16 (8 registers, for Volta's
//!   layout), elements 8..15 repeating 0..7;
//! - the accumulator (16 x 16): (g + 8 (i / 2 % 2), 2t + i % 2 + 8 (i / 4)).
//!
//! Loads and stores go through the checked memory path element by element on behalf of the
//! lane whose fragment holds the element, so an unwritten element is an `uninitialized_read`
//! naming that lane.

use super::decode::{Ctx, DecodeError};
use super::ir::*;
use super::memory::Spaces;
use super::mma::MmaOp;
use super::mma_num::{Elem, MODEL, dot_add};
use super::mma_step::whole_warp;
use super::opcode::Word;
use super::opcode_mem::space_of;
use super::parse::Operand;
use super::step::{Ctx as Lanes32, StepResult, oob};

/// Which matrix a fragment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frag {
    A,
    B,
    C,
}

/// Elements per lane of a fragment (including repeats).
pub fn count(frag: Frag, elem: Elem) -> usize {
    match (frag, elem) {
        (Frag::C, _) | (_, Elem::Bf16) => 8,
        (_, Elem::Tf32) => 4,
        (_, Elem::F16) => 16,
    }
}

/// The (row, column) of element `i` of `lane`'s fragment, in the matrix's own coordinates
/// (A: 16 x k, B: k x 16, C: 16 x 16).
pub fn coord(frag: Frag, elem: Elem, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    let j = i % 8;
    match (frag, elem) {
        (Frag::C, _) => (g + 8 * (i / 2 % 2), 2 * t + i % 2 + 8 * (i / 4)),
        (Frag::A, Elem::Tf32) => (g + 8 * (i % 2), t + 4 * (i / 2)),
        (Frag::B, Elem::Tf32) => (t + 4 * (i % 2), g + 8 * (i / 2)),
        (Frag::A, _) => (g + 8 * (j / 2 % 2), 2 * t + j % 2 + 8 * (j / 4)),
        (Frag::B, _) => (2 * t + j % 2 + 8 * (j / 2 % 2), g + 8 * (j / 4)),
    }
}

/// Registers of a fragment and the elements each holds.
fn per_reg(frag: Frag, elem: Elem) -> usize {
    if frag != Frag::C && elem != Elem::Tf32 {
        2
    } else {
        1
    }
}

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
pub(super) fn decode(cx: &mut Ctx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
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

/// One element of `wmma.mma`: tf32 m16n16k8 runs as two steps of k = 4 (measured on the H100:
/// 100% bit-identical this way, 77% with one fused step of k = 8 as `mma.m16n8k8` adds), the
/// 16-bit shapes as `mma.m16n8k16` does.
fn wmma_dot(a: &[f64], b: &[f64], c: f32, elem: Elem) -> f32 {
    if elem == Elem::Tf32 {
        let first = dot_add(&a[..4], &b[..4], c, elem, MODEL);
        return dot_add(&a[4..], &b[4..], first, elem, MODEL);
    }
    dot_add(a, b, c, elem, MODEL)
}

/// The element offset of (r, c) in a matrix stored with `row` layout and leading dimension `ld`.
fn offset(row: bool, r: usize, c: usize, ld: u64) -> u64 {
    if row {
        r as u64 * ld + c as u64
    } else {
        c as u64 * ld + r as u64
    }
}

/// The default stride: the matrix's width (row-major) or height (column-major).
fn default_ld(frag: Frag, elem: Elem, row: bool) -> u64 {
    let k = if elem == Elem::Tf32 { 8 } else { 16 };
    match (frag, row) {
        (Frag::A, true) | (Frag::B, false) => k,
        _ => 16,
    }
}

pub(super) fn step_wmma(op: &MmaOp, cx: &mut Lanes32<'_>, sp: &mut Spaces<'_>) -> StepResult {
    match *op {
        MmaOp::WmmaLoad {
            frag,
            elem,
            row,
            space,
            ref ds,
            addr,
            stride,
        } => {
            whole_warp(cx, "wmma.load")?;
            let base = addr.base.map_or([0; 32], |r| cx.get(Src::Reg(r)));
            let ld = stride.map(|s| cx.get(s));
            let bytes = if frag == Frag::C {
                4
            } else {
                elem.bits() as usize / 8
            };
            let per = per_reg(frag, elem);
            let mut regs = vec![[0u64; 32]; ds.len()];
            for l in 0..32 {
                let ld = ld.map_or(default_ld(frag, elem, row), |s| s[l] & 0xffff_ffff);
                for i in 0..count(frag, elem) {
                    let (r, c) = coord(frag, elem, l, i);
                    let at = base[l]
                        .wrapping_add(addr.off as u64)
                        .wrapping_add(offset(row, r, c, ld) * bytes as u64);
                    let v = sp
                        .load(space, at, bytes, l)
                        .map_err(|e| oob(false)((e, l)))?;
                    regs[i / per][l] |= v << (16 * (i % per));
                }
            }
            for (d, v) in ds.iter().zip(&regs) {
                cx.put(*d, v);
            }
        }
        MmaOp::WmmaStore {
            row,
            space,
            ref srcs,
            addr,
            stride,
        } => {
            whole_warp(cx, "wmma.store")?;
            let base = addr.base.map_or([0; 32], |r| cx.get(Src::Reg(r)));
            let ld = stride.map(|s| cx.get(s));
            let vals: Vec<[u64; 32]> = srcs.iter().map(|s| cx.get(*s)).collect();
            for l in 0..32 {
                let ld = ld.map_or(16, |s| s[l] & 0xffff_ffff);
                for (i, v) in vals.iter().enumerate() {
                    let (r, c) = coord(Frag::C, Elem::Tf32, l, i);
                    let at = base[l]
                        .wrapping_add(addr.off as u64)
                        .wrapping_add(offset(row, r, c, ld) * 4);
                    sp.store(space, at, 4, v[l] & 0xffff_ffff, l)
                        .map_err(|e| oob(true)((e, l)))?;
                }
            }
        }
        MmaOp::WmmaMma {
            elem,
            ref d,
            ref a,
            ref b,
            ref c,
        } => {
            whole_warp(cx, "wmma.mma")?;
            let k = if elem == Elem::Tf32 { 8 } else { 16 };
            let gather = |cx: &Lanes32<'_>, frag: Frag, regs: &[Src], rows: usize, cols: usize| {
                let vals: Vec<[u64; 32]> = regs.iter().map(|s| cx.get(*s)).collect();
                let per = per_reg(frag, elem);
                let mut m = vec![0u64; rows * cols];
                // f16 fragments repeat elements 0..7 as 8..15; the first copy is the one used.
                for i in 0..count(frag, elem).min(8) {
                    for (l, w) in vals[i / per].iter().enumerate() {
                        let (r, col) = coord(frag, elem, l, i);
                        let w = w >> (16 * (i % per));
                        m[r * cols + col] = if per == 2 {
                            w & 0xffff
                        } else {
                            w & 0xffff_ffff
                        };
                    }
                }
                m
            };
            let am = gather(cx, Frag::A, a, 16, k);
            let bm = gather(cx, Frag::B, b, k, 16);
            let cm = gather(cx, Frag::C, c, 16, 16);
            let val = |w: u64| elem.value(w as u32);
            let mut out = vec![[0u64; 32]; 8];
            for l in 0..32 {
                for (i, o) in out.iter_mut().enumerate() {
                    let (r, n) = coord(Frag::C, elem, l, i);
                    let arow: Vec<f64> = (0..k).map(|j| val(am[r * k + j])).collect();
                    let bcol: Vec<f64> = (0..k).map(|j| val(bm[j * 16 + n])).collect();
                    let acc = f32::from_bits(cm[r * 16 + n] as u32);
                    o[l] = u64::from(wmma_dot(&arow, &bcol, acc, elem).to_bits());
                }
            }
            for (dd, v) in d.iter().zip(&out) {
                cx.put(*dd, v);
            }
        }
        _ => {}
    }
    Ok(())
}
