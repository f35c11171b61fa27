//! What the warp collectives compute once their lanes have arrived (`collective` parks and
//! releases them): the value or predicate each executing lane gives ([`contribution`]), the
//! member mask a lane names ([`member_mask`]), and each lane's result from what every lane taking
//! part gave ([`exchange`]): `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync` and
//! `bar.warp.sync` (a `__syncwarp()`, seen by the checks).

use crate::lanes::Ctx;
use crate::lanes::Lanes;
use crate::memory::Spaces;
use ptx::ir::*;

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
