//! Memory and warp instructions over a warp's executing lanes: `ld`, `st`, `atom`/`red`, and
//! the collectives `shfl.sync`, `vote.sync` and `activemask`. Accesses go lane by lane in lane
//! order, which also fixes the order of atomics; each is seen by the checks through `Spaces`
//! (an atomic as one read-modify-write). `step` hands these operations here.

use crate::check::Acc;
use crate::lanes::Lanes;
use crate::lanes::{Ctx, StepResult, oob};
use crate::memory::Spaces;
use ptx::ir::*;

#[inline(always)]
pub(super) fn step_mem(op: &Op, cx: &mut Ctx<'_>, sp: &mut Spaces<'_>) -> StepResult {
    match *op {
        Op::Ld {
            space,
            ty,
            ref ds,
            addr,
            unused,
        } => {
            let n = ty.bytes() as usize;
            let base = addr.base.map_or([0; 32], |b| cx.get(Src::Reg(b)));
            for (i, &dd) in ds.iter().enumerate() {
                if unused >> i & 1 != 0 {
                    continue;
                }
                let mut r = [0u64; 32];
                let global4 = n == 4 && space == Space::Global;
                for l in cx.lanes() {
                    let at = base[l]
                        .wrapping_add(addr.off as u64)
                        .wrapping_add((i * n) as u64);
                    let v = if global4 {
                        sp.load_global4(at, l)
                    } else {
                        sp.load(space, at, n, l)
                    };
                    let v = v.map_err(|e| oob(false)((e, l)))?;
                    r[l] = if ty.signed() {
                        crate::ops::sext(v, ty.bits()) as u64
                    } else {
                        v
                    };
                }
                cx.put(dd, &r);
            }
        }
        Op::St {
            space,
            ty,
            ref srcs,
            addr,
        } => {
            let n = ty.bytes() as usize;
            let base = addr.base.map_or([0; 32], |b| cx.get(Src::Reg(b)));
            for (i, &s) in srcs.iter().enumerate() {
                let v = cx.get(s);
                for l in cx.lanes() {
                    let at = base[l]
                        .wrapping_add(addr.off as u64)
                        .wrapping_add((i * n) as u64);
                    sp.store(space, at, n, v[l], l)
                        .map_err(|e| oob(true)((e, l)))?;
                }
            }
        }
        Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
        } => {
            let n = ty.bytes() as usize;
            let base = addr.base.map_or([0; 32], |r| cx.get(Src::Reg(r)));
            let (bv, cv) = (cx.get(b), c.map_or([0; 32], |c| cx.get(c)));
            let mut old = [0u64; 32];
            for l in cx.lanes() {
                let at = base[l].wrapping_add(addr.off as u64);
                let o = sp
                    .load_as(space, at, n, l, Acc::Atomic)
                    .map_err(|e| oob(false)((e, l)))?;
                let new = crate::atom::apply(op, ty, o, bv[l], cv[l]);
                sp.store_as(space, at, n, new, l, Acc::Quiet)
                    .map_err(|e| oob(true)((e, l)))?;
                old[l] = o;
            }
            if let Some(d) = d {
                cx.put(d, &old);
            }
        }
        Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Match { .. }
        | Op::Redux { .. }
        | Op::BarWarp { .. } => {
            let (v, p) = contribution(op, cx);
            let exec = cx.exec;
            exchange(op, cx, sp, &v, p, exec);
        }
        Op::Activemask { d } => cx.map1(d, Src::Imm(u64::from(cx.exec)), |x| x),
        _ => {}
    }
    Ok(())
}

/// What the executing lanes of a warp collective give to the others: the value of `a` (a
/// shuffle, a match) or the predicate (a vote, as a lane mask).
pub(super) fn contribution(op: &Op, cx: &Ctx<'_>) -> (Lanes, u32) {
    match *op {
        Op::Shfl { a, .. } | Op::Match { a, .. } | Op::Redux { a, .. } => (cx.get(a), 0),
        Op::Vote { a, .. } => ([0; 32], cx.pred(a) & cx.exec),
        _ => ([0; 32], 0),
    }
}

/// The member mask of a collective as lane `lane` gives it.
pub(super) fn member_mask(op: &Op, cx: &Ctx<'_>, lane: usize) -> u32 {
    match *op {
        Op::Shfl { mask, .. }
        | Op::Vote { mask, .. }
        | Op::Match { mask, .. }
        | Op::Redux { mask, .. }
        | Op::BarWarp { mask } => cx.get(mask)[lane] as u32,
        _ => u32::MAX,
    }
}

/// The results of a warp collective for the executing lanes of `cx`, from what every lane
/// taking part gave (`values`, `preds`; `all`: the lanes taking part, which may have reached it
/// at other instructions of the same kind).
pub(super) fn exchange(
    op: &Op,
    cx: &mut Ctx<'_>,
    sp: &mut Spaces<'_>,
    values: &Lanes,
    preds: u32,
    all: u32,
) {
    match *op {
        Op::Shfl {
            mode, d, p, b, c, ..
        } => {
            let (bv, cv) = (cx.get(b), cx.get(c));
            let mut r = [0u64; 32];
            let mut ok = 0u32;
            for l in 0..32u32 {
                let (bl, cl) = (bv[l as usize] as u32 & 31, cv[l as usize] as u32);
                let seg = (cl >> 8) & 31;
                let maxl = (l & seg) | (cl & 31 & !seg);
                let minl = l & seg;
                let (j, pv) = match mode {
                    ShflMode::Up => {
                        let j = l as i32 - bl as i32;
                        (j, j >= maxl as i32)
                    }
                    ShflMode::Down => ((l + bl) as i32, l + bl <= maxl),
                    ShflMode::Bfly => ((l ^ bl) as i32, (l ^ bl) <= maxl),
                    ShflMode::Idx => {
                        let j = minl | (bl & !seg);
                        (j as i32, j <= maxl)
                    }
                };
                let src = if pv { j as usize & 31 } else { l as usize };
                r[l as usize] = values[src] & 0xffff_ffff;
                ok |= u32::from(pv) << l;
            }
            cx.put(d, &r);
            if let Some(p) = p {
                cx.set_pred(p, ok);
            }
        }
        Op::Vote { mode, d, dp, .. } => match (mode, d, dp) {
            (VoteMode::Ballot, Some(d), _) => cx.map1(d, Src::Imm(u64::from(preds)), |x| x),
            (VoteMode::All, _, Some(q)) => cx.set_pred(q, if preds == all { u32::MAX } else { 0 }),
            (VoteMode::Any, _, Some(q)) => cx.set_pred(q, if preds != 0 { u32::MAX } else { 0 }),
            (VoteMode::Elect, d, q) => {
                let leader = all.trailing_zeros() & 31;
                if let Some(d) = d {
                    cx.map1(d, Src::Imm(u64::from(leader)), |x| x);
                }
                if let Some(q) = q {
                    cx.set_pred(q, 1 << leader);
                }
            }
            (VoteMode::Uni, _, Some(q)) => cx.set_pred(
                q,
                if preds == 0 || preds == all {
                    u32::MAX
                } else {
                    0
                },
            ),
            _ => {}
        },
        Op::Match {
            all: every,
            wide,
            d,
            p,
            ..
        } => {
            let word = |l: usize| {
                if wide {
                    values[l]
                } else {
                    values[l] & 0xffff_ffff
                }
            };
            let mut r = [0u64; 32];
            let mut agree = 0u32;
            for l in cx.lanes() {
                let same = (0..32)
                    .filter(|&k| all >> k & 1 == 1 && word(k) == word(l))
                    .fold(0u32, |m, k| m | 1 << k);
                if every {
                    let yes = same == all;
                    r[l] = if yes { u64::from(all) } else { 0 };
                    agree |= u32::from(yes) << l;
                } else {
                    r[l] = u64::from(same);
                }
            }
            cx.put(d, &r);
            if let Some(p) = p {
                cx.set_pred(p, agree);
            }
        }
        Op::Redux { op, signed, d, .. } => {
            let word = |l: usize| values[l] as u32;
            let r = (0..32)
                .filter(|&k| all >> k & 1 == 1)
                .map(word)
                .reduce(|x, y| match op {
                    ReduxOp::Add => x.wrapping_add(y),
                    ReduxOp::Min if signed => (x as i32).min(y as i32) as u32,
                    ReduxOp::Max if signed => (x as i32).max(y as i32) as u32,
                    ReduxOp::Min => x.min(y),
                    ReduxOp::Max => x.max(y),
                    ReduxOp::And => x & y,
                    ReduxOp::Or => x | y,
                    ReduxOp::Xor => x ^ y,
                });
            cx.map1(d, Src::Imm(u64::from(r.unwrap_or(0))), |x| x);
        }
        Op::BarWarp { .. } => sp.chk.syncwarp(sp.tid0, all),
        _ => {}
    }
}
