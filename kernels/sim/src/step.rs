//! One non-control instruction over a warp's executing lanes.
//!
//! Operands are fetched once as 32-lane arrays, the operation is chosen once per instruction
//! (hot integer and f32 forms have their own loops; the rest go through the per-lane tables of
//! `ops` and `convert`), and results are written back only to executing lanes. Memory accesses
//! (`ld`, `st`, `atom`/`red`) go lane by lane in lane order, which also fixes the order of
//! atomics; each is seen by the checks through `Spaces`. The warp collectives' results are
//! `exchange`'s, the tensor cores' `mma_step`'s and `wmma`'s.

use crate::check::Acc;
use crate::convert::cmp;
use crate::exchange;
use crate::lanes::{Ctx, Lanes, StepResult, WarpRegs, oob};
use crate::machine::to_generic;
use crate::memory::{Spaces, window_base};
use crate::ops::{bf32, f32b};
use crate::ops::{bin, tern, un};
use ptx::ir::*;

fn plain(m: &FMods) -> bool {
    matches!(m.rnd, Rnd::Default | Rnd::Rn) && !m.ftz && !m.sat
}

pub(super) fn step(
    op: &Op,
    w: WarpRegs<'_>,
    exec: u32,
    sp: &mut Spaces<'_>,
    clock: u64,
) -> StepResult {
    let mut cx = Ctx { w, exec, clock };
    match *op {
        Op::Un { op, ty, m, d, a } => match (op, ty) {
            (Un::Mov, _) => {
                let mask = ty.mask();
                cx.map1(d, a, |x| x & mask)
            }
            _ => cx.map1(d, a, |x| un(op, ty, m, x)),
        },
        Op::Bin { op, ty, m, d, a, b } => {
            use Bin::*;
            use Ty::*;
            match (op, ty) {
                (Add, S32 | U32 | B32) => {
                    cx.map2(d, a, b, |x, y| u64::from((x as u32).wrapping_add(y as u32)))
                }
                (Sub, S32 | U32 | B32) => {
                    cx.map2(d, a, b, |x, y| u64::from((x as u32).wrapping_sub(y as u32)))
                }
                (MulLo, S32 | U32 | B32) => {
                    cx.map2(d, a, b, |x, y| u64::from((x as u32).wrapping_mul(y as u32)))
                }
                (Add, S64 | U64 | B64) => cx.map2(d, a, b, u64::wrapping_add),
                (Sub, S64 | U64 | B64) => cx.map2(d, a, b, u64::wrapping_sub),
                (MulWide, S32) => cx.map2(d, a, b, |x, y| {
                    (i64::from(x as i32) * i64::from(y as i32)) as u64
                }),
                (MulWide, U32) => {
                    cx.map2(d, a, b, |x, y| u64::from(x as u32) * u64::from(y as u32))
                }
                (Add, F32) if plain(&m) => cx.map2(d, a, b, |x, y| bf32(f32b(x) + f32b(y))),
                (MulLo, F32) if plain(&m) => cx.map2(d, a, b, |x, y| bf32(f32b(x) * f32b(y))),
                (Shl, B32 | U32 | S32) => cx.map2(d, a, b, |x, y| {
                    if y as u32 >= 32 {
                        0
                    } else {
                        u64::from((x as u32) << y as u32)
                    }
                }),
                (And, B32 | U32 | S32) => cx.map2(d, a, b, |x, y| (x & y) & 0xffff_ffff),
                _ => cx.map2(d, a, b, |x, y| bin(op, ty, m, x, y)),
            }
        }
        Op::Tern {
            op,
            ty,
            m,
            d,
            a,
            b,
            c,
        } => match (op, ty) {
            (Tern::Fma, Ty::F32) if plain(&m) => cx.map3(d, a, b, c, |x, y, z| {
                bf32(f32b(x).mul_add(f32b(y), f32b(z)))
            }),
            (Tern::MadLo, Ty::S32 | Ty::U32) => cx.map3(d, a, b, c, |x, y, z| {
                u64::from((x as u32).wrapping_mul(y as u32).wrapping_add(z as u32))
            }),
            _ => cx.map3(d, a, b, c, |x, y, z| tern(op, ty, m, x, y, z)),
        },
        Op::Bfi {
            ty,
            d,
            f,
            b,
            pos,
            len,
        } => {
            let (fv, bv, pv, lv) = (cx.get(f), cx.get(b), cx.get(pos), cx.get(len));
            let r: Lanes = std::array::from_fn(|l| crate::ops::bfi(ty, fv[l], bv[l], pv[l], lv[l]));
            cx.put(d, &r);
        }
        Op::Setp {
            cmp: c,
            ty,
            ftz,
            p,
            q,
            a,
            b,
            comb,
        } => {
            let (av, bv) = (cx.get(a), cx.get(b));
            let mut t = 0u32;
            let int32 = |f: fn(i32, i32) -> bool| {
                (0..32).fold(0u32, |t, l| {
                    t | u32::from(f(av[l] as i32, bv[l] as i32)) << l
                })
            };
            match (c, ty) {
                (Cmp::Eq, Ty::S32 | Ty::U32 | Ty::B32) => t = int32(|x, y| x == y),
                (Cmp::Ne, Ty::S32 | Ty::U32 | Ty::B32) => t = int32(|x, y| x != y),
                (Cmp::Lt, Ty::S32) => t = int32(|x, y| x < y),
                (Cmp::Ge, Ty::S32) => t = int32(|x, y| x >= y),
                (Cmp::Gt, Ty::S32) => t = int32(|x, y| x > y),
                (Cmp::Le, Ty::S32) => t = int32(|x, y| x <= y),
                _ => {
                    for l in 0..32 {
                        t |= u32::from(cmp(c, ty, ftz, av[l], bv[l])) << l;
                    }
                }
            }
            let (mut t1, mut t2) = (t, !t);
            if let Some((bop, ps)) = comb {
                let pv = cx.pred(ps);
                let f = |x: u32| match bop {
                    BoolOp::And => x & pv,
                    BoolOp::Or => x | pv,
                    BoolOp::Xor => x ^ pv,
                };
                (t1, t2) = (f(t1), f(t2));
            }
            cx.set_pred(p, t1);
            if let Some(q) = q {
                cx.set_pred(q, t2);
            }
        }
        Op::Set {
            cmp: c,
            ty,
            dty,
            d,
            a,
            b,
        } => {
            let one = if dty == Ty::F32 {
                0x3f80_0000
            } else {
                dty.mask()
            };
            cx.map2(
                d,
                a,
                b,
                |x, y| if cmp(c, ty, false, x, y) { one } else { 0 },
            );
        }
        Op::Selp { ty, d, a, b, p } => {
            let pv = cx.pred(p);
            let (av, bv) = (cx.get(a), cx.get(b));
            let r: Lanes =
                std::array::from_fn(|l| if pv >> l & 1 == 1 { av[l] } else { bv[l] } & ty.mask());
            cx.put(d, &r);
        }
        Op::PredOp { op, not, d, a, b } => {
            let av = cx.pred(a);
            let bv = b.map_or(0, |b| cx.pred(b));
            let v = match op {
                Some(BoolOp::And) => av & bv,
                Some(BoolOp::Or) => av | bv,
                Some(BoolOp::Xor) => av ^ bv,
                None if not => !av,
                None => av,
            };
            cx.set_pred(d, v);
        }
        Op::Cvt { dty, sty, m, d, a } => match (dty, sty) {
            (Ty::F32, Ty::S32) if plain(&m) => cx.map1(d, a, |x| bf32(x as i32 as f32)),
            (Ty::U64, Ty::U32) | (Ty::U64, Ty::B32) => cx.map1(d, a, |x| x & 0xffff_ffff),
            (Ty::S64, Ty::S32) => cx.map1(d, a, |x| i64::from(x as i32) as u64),
            _ => cx.map1(d, a, |x| crate::convert::cvt(dty, sty, m, x)),
        },
        Op::Pack {
            part_bits,
            d,
            ref parts,
        } => {
            let mut r = [0u64; 32];
            let pm = if part_bits >= 64 {
                u64::MAX
            } else {
                (1u64 << part_bits) - 1
            };
            for (i, p) in parts.iter().enumerate() {
                let v = cx.get(*p);
                for l in 0..32 {
                    r[l] |= (v[l] & pm) << (i as u32 * part_bits).min(63);
                }
            }
            cx.put(d, &r);
        }
        Op::Unpack {
            part_bits,
            ref ds,
            a,
        } => {
            let v = cx.get(a);
            let pm = if part_bits >= 64 {
                u64::MAX
            } else {
                (1u64 << part_bits) - 1
            };
            for (i, dd) in ds.iter().enumerate() {
                if let Some(dd) = dd {
                    let r: Lanes =
                        std::array::from_fn(|l| (v[l] >> (i as u32 * part_bits).min(63)) & pm);
                    cx.put(*dd, &r);
                }
            }
        }
        Op::Cvta { to, space, d, a } => {
            let base = window_base(space);
            if to {
                cx.map1(d, a, |x| x.wrapping_sub(base));
            } else {
                cx.map1(d, a, |x| to_generic(space, x));
            }
        }
        Op::Ld { .. }
        | Op::St { .. }
        | Op::Atom { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Match { .. }
        | Op::Redux { .. }
        | Op::BarWarp { .. }
        | Op::Activemask { .. } => return memory(op, &mut cx, sp),
        Op::Mma(ref m) => {
            return match **m {
                ptx::ir::MmaOp::WmmaLoad { .. }
                | ptx::ir::MmaOp::WmmaStore { .. }
                | ptx::ir::MmaOp::WmmaMma { .. } => crate::wmma::step_wmma(m, &mut cx, sp),
                _ => crate::mma_step::step_mma(m, &mut cx, sp),
            };
        }
        Op::Nop => {}
        Op::Bra { .. }
        | Op::Exit
        | Op::Bar
        | Op::NamedBar { .. }
        | Op::SetMaxNreg { .. }
        | Op::Mbar(_)
        | Op::Printf { .. }
        | Op::CpAsync { .. }
        | Op::CpAsyncCommit
        | Op::Bulk(_)
        | Op::TensorMap(_)
        | Op::CpAsyncWait { .. }
        | Op::Call { .. }
        | Op::Ret
        | Op::Trap
        | Op::AssertFail { .. }
        | Op::Wgmma(_)
        | Op::Unsupported { .. } => {}
    }
    Ok(())
}

/// The memory and warp instructions: `ld`, `st`, `atom`/`red` lane by lane in lane order
/// (which also fixes the order of atomics), each access seen by the checks through `Spaces` (an
/// atomic as one read-modify-write); the collectives' exchange (`exchange`), and `activemask`.
/// Inlined into [`step`]: as an out-of-line call it costs the unchecked simulator about 40%.
#[inline(always)]
fn memory(op: &Op, cx: &mut Ctx<'_>, sp: &mut Spaces<'_>) -> StepResult {
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
            let (v, p) = exchange::contribution(op, cx);
            let exec = cx.exec;
            exchange::exchange(op, cx, sp, &v, p, exec);
        }
        Op::Activemask { d } => cx.map1(d, Src::Imm(u64::from(cx.exec)), |x| x),
        _ => {}
    }
    Ok(())
}
