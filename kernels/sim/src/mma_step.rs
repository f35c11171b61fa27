//! Executes a [`MmaOp`] over a warp: the half-precision ops lane by lane, and the collectives
//! (`mma.sync`, `ldmatrix`) over all 32 lanes at once, with the fragment layouts of the PTX ISA
//! ("Matrix Fragments for mma.m16n8k8" and "m16n8k16", "Warp-level matrix load instruction:
//! ldmatrix"). With g = lane / 4 and t = lane % 4:
//! - A, 16 x K row-major: tf32 register i holds (g + 8 (i % 2), t + 4 (i / 2)); 16-bit register
//!   i holds (g + 8 (i % 2), 2t + 8 (i / 2)) in its low half and the next column in its high;
//! - B, K x 8: tf32 register i holds (t + 4i, g); 16-bit register i holds (2t + 8i, g) low and
//!   the next row high;
//! - C and D, 16 x 8 f32: register i holds (g + 8 (i / 2), 2t + i % 2).
//!
//! A collective needs every lane of the warp: one executed by only some of them stops the run
//! with `barrier_divergence` naming the missing lanes, as the hardware's behaviour is undefined.
//! `ldmatrix` reads each row through the checked memory path on behalf of the lane that gave
//! the row's address, so a row nobody wrote is an `uninitialized_read` naming that lane.

use crate::fault::Fault;
use crate::lanes::Lanes;
use crate::lanes::{Ctx, StepResult, oob};
use crate::memory::Spaces;
use crate::mma_half;
use crate::mma_num::ElemValue;
use crate::mma_num::{Elem, MODEL, dot_add, to_tf32};
use ptx::ir::MmaOp;
use ptx::ir::*;

/// The lane and register of A's element (row, col) and whether it is a register's high half.
fn a_at(elem: Elem, row: usize, col: usize) -> (usize, usize, bool) {
    let (g, hi) = (row % 8, row / 8);
    match elem {
        Elem::Tf32 => (g * 4 + col % 4, hi + 2 * (col / 4), false),
        _ => (g * 4 + (col % 8) / 2, hi + 2 * (col / 8), col % 2 == 1),
    }
}

/// A's 16 rows from the fragment registers `av`: k elements a row, the rest zero.
pub(super) fn a_matrix(elem: Elem, k: usize, av: &[Lanes; 4]) -> [[f64; 16]; 16] {
    std::array::from_fn(|r| {
        std::array::from_fn(|j| {
            if j >= k {
                return 0.0;
            }
            let (l, i, hi) = a_at(elem, r, j);
            elem.value(part(elem, av[i][l], hi))
        })
    })
}

/// The lane and register of B's element (k, n) and whether it is a register's high half.
fn b_at(elem: Elem, k: usize, n: usize) -> (usize, usize, bool) {
    match elem {
        Elem::Tf32 => (n * 4 + k % 4, k / 4, false),
        _ => (n * 4 + (k % 8) / 2, k / 8, k % 2 == 1),
    }
}

/// The lane and register of C's and D's element (row, col).
pub(super) fn c_at(row: usize, col: usize) -> (usize, usize) {
    ((row % 8) * 4 + col / 2, 2 * (row / 8) + col % 2)
}

/// Element bits of a register word.
fn part(elem: Elem, word: u64, high: bool) -> u32 {
    match (elem, high) {
        (Elem::Tf32, _) => word as u32,
        (_, false) => (word & 0xffff) as u32,
        (_, true) => (word >> 16 & 0xffff) as u32,
    }
}

pub(super) fn whole_warp(cx: &Ctx<'_>, what: &str) -> StepResult {
    if cx.exec == u32::MAX {
        return Ok(());
    }
    let missing: Vec<String> = (0..32)
        .filter(|l| cx.exec >> l & 1 == 0)
        .map(|l| l.to_string())
        .collect();
    Err((
        Fault::BarrierDivergence {
            detail: format!(
                "`{what}` is a warp-wide collective: all 32 lanes must execute it together, but lanes {} did not (a tensor-core fragment is spread over the whole warp)",
                missing.join(", ")
            ),
        },
        Some(cx.exec.trailing_zeros() as usize),
    ))
}

pub(super) fn step_mma(op: &MmaOp, cx: &mut Ctx<'_>, sp: &mut Spaces<'_>) -> StepResult {
    match *op {
        MmaOp::Half {
            op,
            ty,
            x2,
            m,
            d,
            srcs: [a, b, c],
        } => {
            cx.map3(d, a, b, c, |x, y, z| {
                mma_half::apply(op, ty, x2, m, x, y, z)
            });
        }
        MmaOp::Pack { ty, relu, d, a, b } => {
            cx.map2(d, a, b, |x, y| mma_half::pack(ty, relu, x, y));
        }
        MmaOp::Tf32 { away, even, d, a } => {
            cx.map1(d, a, |x| u64::from(to_tf32(x as u32, away, even)));
        }
        MmaOp::Mma {
            elem,
            k,
            d,
            a,
            b,
            c,
        } => {
            whole_warp(cx, "mma.sync")?;
            let (av, bv, cv) = (
                a.map(|s| cx.get(s)),
                b.map(|s| cx.get(s)),
                c.map(|s| cx.get(s)),
            );
            let k = k as usize;
            let amat = a_matrix(elem, k, &av);
            let bmat: Vec<[f64; 16]> = (0..8)
                .map(|n| {
                    std::array::from_fn(|j| {
                        if j >= k {
                            return 0.0;
                        }
                        let (l, i, hi) = b_at(elem, j, n);
                        elem.value(part(elem, bv[i][l], hi))
                    })
                })
                .collect();
            let mut out = [[0u64; 32]; 4];
            for (r, arow) in amat.iter().enumerate() {
                for (n, bcol) in bmat.iter().enumerate() {
                    let (l, i) = c_at(r, n);
                    let acc = f32::from_bits(cv[i][l] as u32);
                    let v = dot_add(&arow[..k], &bcol[..k], acc, elem, MODEL);
                    out[i][l] = u64::from(v.to_bits());
                }
            }
            for (i, dd) in d.iter().enumerate() {
                cx.put(*dd, &out[i]);
            }
        }
        MmaOp::Ldmatrix {
            trans,
            space,
            ref ds,
            addr,
        } => {
            whole_warp(cx, "ldmatrix")?;
            let base = addr.base.map_or([0; 32], |r| cx.get(Src::Reg(r)));
            let row_at = |j: usize| base[j].wrapping_add(addr.off as u64);
            for (m, &dd) in ds.iter().enumerate() {
                let mut r = [0u64; 32];
                for (l, v) in r.iter_mut().enumerate() {
                    let (g, t) = (l / 4, l % 4);
                    *v = if trans {
                        // Rows 2t and 2t + 1, column g: two halves from two lanes' rows.
                        let mut w = 0;
                        for h in 0..2 {
                            let src = 8 * m + 2 * t + h;
                            let x = sp
                                .load(space, row_at(src).wrapping_add(2 * g as u64), 2, src)
                                .map_err(|e| oob(false)((e, src)))?;
                            w |= x << (16 * h);
                        }
                        w
                    } else {
                        let src = 8 * m + g;
                        sp.load(space, row_at(src).wrapping_add(4 * t as u64), 4, src)
                            .map_err(|e| oob(false)((e, src)))?
                    };
                }
                cx.put(dd, &r);
            }
        }
        MmaOp::WmmaLoad { .. } | MmaOp::WmmaStore { .. } | MmaOp::WmmaMma { .. } => {
            unreachable!("`step` hands wmma to `wmma::step_wmma`")
        }
    }
    Ok(())
}
