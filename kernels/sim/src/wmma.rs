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

use crate::lanes::{Ctx as Lanes32, StepResult, oob};
use crate::memory::Spaces;
use crate::mma_num::ElemValue;
use crate::mma_num::{Elem, MODEL, dot_add};
use crate::mma_step::whole_warp;
use ptx::ir::*;

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
    let k = u64::from(elem.k());
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
        } => load(cx, sp, (frag, elem, row), (space, addr, stride), ds),
        MmaOp::WmmaStore {
            row,
            space,
            ref srcs,
            addr,
            stride,
        } => store(cx, sp, row, (space, addr, stride), srcs),
        MmaOp::WmmaMma {
            elem,
            ref d,
            ref a,
            ref b,
            ref c,
        } => mma(cx, elem, d, [a.as_slice(), b.as_slice(), c.as_slice()]),
        _ => Ok(()),
    }
}

/// `wmma.load` of a `frag` fragment of `elem`s (`row`: row-major) from `addr` in `space`, with
/// the stride register if any, into the registers `ds`.
fn load(
    cx: &mut Lanes32<'_>,
    sp: &mut Spaces<'_>,
    (frag, elem, row): (Frag, Elem, bool),
    (space, addr, stride): (Space, Addr, Option<Src>),
    ds: &[Slot],
) -> StepResult {
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
    Ok(())
}

/// `wmma.store` of the accumulator registers `srcs` (`row`: row-major) to `addr` in `space`,
/// with the stride register if any.
fn store(
    cx: &mut Lanes32<'_>,
    sp: &mut Spaces<'_>,
    row: bool,
    (space, addr, stride): (Space, Addr, Option<Src>),
    srcs: &[Src],
) -> StepResult {
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
    Ok(())
}

/// `wmma.mma` of `elem` fragments: D = A x B + C over the whole warp, each element of D a dot
/// product as the tensor cores round it (`wmma_dot`).
fn mma(cx: &mut Lanes32<'_>, elem: Elem, d: &[Slot], [a, b, c]: [&[Src]; 3]) -> StepResult {
    whole_warp(cx, "wmma.mma")?;
    let k = elem.k() as usize;
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
    Ok(())
}
