//! One non-control instruction over a warp's executing lanes.
//!
//! Operands are fetched once as 32-lane arrays, the operation is chosen once per instruction
//! (hot integer and f32 forms have their own loops; the rest go through the per-lane tables of
//! `ops` and `convert`), and results are written back only to executing lanes. Memory accesses
//! go lane by lane in lane order, which also fixes the order of atomics.

use super::exec::{Lanes, WarpRegs, bin, cmp, tern, to_generic, un};
use super::fault::Fault;
use super::ir::*;
use super::memory::{Spaces, window_base};
use super::ops::{bf32, f32b};

pub(super) type StepResult = Result<(), (Fault, Option<usize>)>;

pub(super) struct Ctx<'a> {
    pub w: WarpRegs<'a>,
    pub exec: u32,
    pub clock: u64,
}

impl Ctx<'_> {
    /// Each lane's address `a`: its base register (if any) plus the offset.
    #[inline]
    pub(super) fn addrs(&self, a: Addr) -> Lanes {
        a.base
            .map_or([0; 32], |b| self.get(Src::Reg(b)))
            .map(|x| x.wrapping_add(a.off as u64))
    }

    #[inline(always)]
    pub(super) fn get(&self, s: Src) -> Lanes {
        match s {
            Src::Reg(r) => {
                let at = r as usize * 32;
                let mut out = [0u64; 32];
                out.copy_from_slice(&self.w.regs[at..at + 32]);
                out
            }
            Src::Imm(v) => [v; 32],
            Src::Clock => [self.clock; 32],
        }
    }
    #[inline(always)]
    pub(super) fn put(&mut self, d: Slot, v: &Lanes) {
        let at = d as usize * 32;
        let dst = &mut self.w.regs[at..at + 32];
        if self.exec == u32::MAX {
            dst.copy_from_slice(v);
        } else {
            for (l, x) in dst.iter_mut().enumerate() {
                if self.exec >> l & 1 == 1 {
                    *x = v[l];
                }
            }
        }
    }
    #[inline(always)]
    pub(super) fn map1(&mut self, d: Slot, a: Src, f: impl Fn(u64) -> u64) {
        let a = self.get(a);
        let r: Lanes = std::array::from_fn(|l| f(a[l]));
        self.put(d, &r);
    }
    #[inline(always)]
    pub(super) fn map2(&mut self, d: Slot, a: Src, b: Src, f: impl Fn(u64, u64) -> u64) {
        let (a, b) = (self.get(a), self.get(b));
        let r: Lanes = std::array::from_fn(|l| f(a[l], b[l]));
        self.put(d, &r);
    }
    #[inline(always)]
    pub(super) fn map3(
        &mut self,
        d: Slot,
        a: Src,
        b: Src,
        c: Src,
        f: impl Fn(u64, u64, u64) -> u64,
    ) {
        let (a, b, c) = (self.get(a), self.get(b), self.get(c));
        let r: Lanes = std::array::from_fn(|l| f(a[l], b[l], c[l]));
        self.put(d, &r);
    }
    pub(super) fn pred(&self, p: PSrc) -> u32 {
        match p {
            PSrc::Slot(s, neg) => self.w.preds[s as usize] ^ if neg { u32::MAX } else { 0 },
            PSrc::Const(b) => {
                if b {
                    u32::MAX
                } else {
                    0
                }
            }
        }
    }
    pub(super) fn set_pred(&mut self, p: PSlot, v: u32) {
        let old = self.w.preds[p as usize];
        self.w.preds[p as usize] = (old & !self.exec) | (v & self.exec);
    }
    pub(super) fn lanes(&self) -> impl Iterator<Item = usize> + use<> {
        let mut e = self.exec;
        std::iter::from_fn(move || {
            if e == 0 {
                return None;
            }
            let l = e.trailing_zeros() as usize;
            e &= e - 1;
            Some(l)
        })
    }
}

fn plain(m: &FMods) -> bool {
    matches!(m.rnd, Rnd::Default | Rnd::Rn) && !m.ftz && !m.sat
}

pub(super) fn oob(
    write: bool,
) -> impl Fn((super::memory::MemFault, usize)) -> (Fault, Option<usize>) {
    move |(mem, lane)| (Fault::OutOfBounds { write, mem }, Some(lane))
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
            let r: Lanes = std::array::from_fn(|l| super::ops::bfi(ty, fv[l], bv[l], pv[l], lv[l]));
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
            _ => cx.map1(d, a, |x| super::convert::cvt(dty, sty, m, x)),
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
        | Op::Activemask { .. } => return super::step_mem::step_mem(op, &mut cx, sp),
        Op::Mma(ref m) => return super::mma_step::step_mma(m, &mut cx, sp),
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
