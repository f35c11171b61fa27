//! Memory and warp instructions over a warp's executing lanes: `ld`, `st`, `atom`/`red`, and
//! the collectives `shfl.sync`, `vote.sync` and `activemask`. Accesses go lane by lane in lane
//! order, which also fixes the order of atomics; each is seen by the checks through `Spaces`
//! (an atomic as one read-modify-write). `step` hands these operations here.

use super::check::Acc;
use super::ir::*;
use super::memory::Spaces;
use super::step::{Ctx, StepResult, oob};

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
                        super::ops::sext(v, ty.bits()) as u64
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
                let new = super::atom::apply(op, ty, o, bv[l], cv[l]);
                sp.store_as(space, at, n, new, l, Acc::Quiet)
                    .map_err(|e| oob(true)((e, l)))?;
                old[l] = o;
            }
            if let Some(d) = d {
                cx.put(d, &old);
            }
        }
        Op::Shfl {
            mode,
            d,
            p,
            a,
            b,
            c,
        } => {
            let (av, bv, cv) = (cx.get(a), cx.get(b), cx.get(c));
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
                r[l as usize] = av[src] & 0xffff_ffff;
                ok |= u32::from(pv) << l;
            }
            cx.put(d, &r);
            if let Some(p) = p {
                cx.set_pred(p, ok);
            }
        }
        Op::Vote { mode, d, dp, a } => {
            let exec = cx.exec;
            let pv = cx.pred(a) & exec;
            match (mode, d, dp) {
                (VoteMode::Ballot, Some(d), _) => cx.map1(d, Src::Imm(u64::from(pv)), |x| x),
                (VoteMode::All, _, Some(q)) => {
                    cx.set_pred(q, if pv == exec { u32::MAX } else { 0 })
                }
                (VoteMode::Any, _, Some(q)) => cx.set_pred(q, if pv != 0 { u32::MAX } else { 0 }),
                (VoteMode::Uni, _, Some(q)) => {
                    cx.set_pred(q, if pv == 0 || pv == exec { u32::MAX } else { 0 })
                }
                _ => {}
            }
        }
        Op::Activemask { d } => cx.map1(d, Src::Imm(u64::from(cx.exec)), |x| x),
        _ => {}
    }
    Ok(())
}
