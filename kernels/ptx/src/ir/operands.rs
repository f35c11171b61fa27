//! The registers and predicates an instruction reads and writes, for the critical path of
//! `runner profile` (`critical`): an instruction waits for the registers it reads, and the ones
//! it writes are ready after its latency. Decided once per instruction of the program from its
//! decoded operation. The families whose operands are not followed here (`wgmma`, the bulk copies,
//! `mbarrier`, tensor maps, calls, `printf`) count as reading and writing nothing: they issue in
//! their warp's order, and what waits on them is not seen (their work is the tensor and memory
//! bounds').

use super::{Addr, Inst, MmaOp, Op, PSlot, PSrc, Slot, Src};

/// What one instruction reads and writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Operands {
    pub reads: Vec<Slot>,
    pub writes: Vec<Slot>,
    /// The predicates read (the guard among them) and written.
    pub pred_reads: Vec<PSlot>,
    pub pred_writes: Vec<PSlot>,
}

impl Operands {
    fn src(&mut self, s: &Src) {
        if let Src::Reg(r) = s {
            self.reads.push(*r);
        }
    }

    fn srcs<'a>(&mut self, s: impl IntoIterator<Item = &'a Src>) {
        s.into_iter().for_each(|s| self.src(s));
    }

    fn psrc(&mut self, p: &PSrc) {
        if let PSrc::Slot(s, _) = p {
            self.pred_reads.push(*s);
        }
    }

    fn addr(&mut self, a: &Addr) {
        self.reads.extend(a.base);
    }
}

impl Inst {
    /// An instruction of `op`, unguarded, at no source line.
    pub fn new(op: Op) -> Inst {
        Inst {
            guard: None,
            op,
            file: 0,
            line: 0,
            call: 0,
            call_file: 0,
            via: 0,
            text: 0,
            wgmma_sync: false,
        }
    }

    /// What this instruction reads and writes.
    pub fn operands(&self) -> Operands {
        operands(self)
    }
}

/// The operands of `inst`.
fn operands(inst: &Inst) -> Operands {
    let mut o = Operands::default();
    o.pred_reads.extend(inst.guard.map(|(p, _)| p));
    match &inst.op {
        Op::Un { d, a, .. } | Op::Cvt { d, a, .. } | Op::Cvta { d, a, .. } => {
            o.src(a);
            o.writes.push(*d);
        }
        Op::Bin { d, a, b, .. } | Op::Set { d, a, b, .. } => {
            o.srcs([a, b]);
            o.writes.push(*d);
        }
        Op::Tern { d, a, b, c, .. } => {
            o.srcs([a, b, c]);
            o.writes.push(*d);
        }
        Op::Bfi {
            d, f, b, pos, len, ..
        } => {
            o.srcs([f, b, pos, len]);
            o.writes.push(*d);
        }
        Op::Setp {
            p, q, a, b, comb, ..
        } => {
            o.srcs([a, b]);
            if let Some((_, c)) = comb {
                o.psrc(c);
            }
            o.pred_writes.push(*p);
            o.pred_writes.extend(*q);
        }
        Op::Selp { d, a, b, p, .. } => {
            o.srcs([a, b]);
            o.psrc(p);
            o.writes.push(*d);
        }
        Op::PredOp { d, a, b, .. } => {
            o.psrc(a);
            if let Some(b) = b {
                o.psrc(b);
            }
            o.pred_writes.push(*d);
        }
        Op::Pack { d, parts, .. } => {
            o.srcs(parts);
            o.writes.push(*d);
        }
        Op::Unpack { ds, a, .. } => {
            o.src(a);
            o.writes.extend(ds.iter().flatten());
        }
        Op::Ld { ds, addr, .. } => {
            o.addr(addr);
            o.writes.extend(ds);
        }
        Op::St { srcs, addr, .. } => {
            o.addr(addr);
            o.srcs(srcs);
        }
        Op::Atom { d, addr, b, c, .. } => {
            o.addr(addr);
            o.src(b);
            o.srcs(c);
            o.writes.extend(*d);
        }
        Op::NamedBar { id, count, .. } => {
            o.src(id);
            o.srcs(count);
        }
        Op::BarWarp { mask } => o.src(mask),
        Op::Shfl {
            d,
            p,
            a,
            b,
            c,
            mask,
            ..
        } => {
            o.srcs([a, b, c, mask]);
            o.writes.push(*d);
            o.pred_writes.extend(*p);
        }
        Op::Vote { d, dp, a, mask, .. } => {
            o.psrc(a);
            o.src(mask);
            o.writes.extend(*d);
            o.pred_writes.extend(*dp);
        }
        Op::Match { d, p, a, mask, .. } => {
            o.srcs([a, mask]);
            o.writes.push(*d);
            o.pred_writes.extend(*p);
        }
        Op::Redux { d, a, mask, .. } => {
            o.srcs([a, mask]);
            o.writes.push(*d);
        }
        Op::Activemask { d } => o.writes.push(*d),
        Op::CpAsync {
            dst,
            src,
            src_size,
            ignore_src,
            ..
        } => {
            o.addr(dst);
            o.addr(src);
            o.srcs(src_size);
            if let Some(p) = ignore_src {
                o.psrc(p);
            }
        }
        Op::Mma(m) => mma(m, &mut o),
        _ => {}
    }
    o
}

/// The operands of the tensor-core and half-precision family.
fn mma(m: &MmaOp, o: &mut Operands) {
    match m {
        MmaOp::Mma { d, a, b, c, .. } => {
            o.srcs(a.iter().chain(b).chain(c));
            o.writes.extend(d);
        }
        MmaOp::Ldmatrix { ds, addr, .. } => {
            o.addr(addr);
            o.writes.extend(ds);
        }
        MmaOp::Half { d, srcs, .. } => {
            o.srcs(srcs);
            o.writes.push(*d);
        }
        MmaOp::Pack { d, a, b, .. } => {
            o.srcs([a, b]);
            o.writes.push(*d);
        }
        MmaOp::WmmaLoad {
            ds, addr, stride, ..
        } => {
            o.addr(addr);
            o.srcs(stride);
            o.writes.extend(ds);
        }
        MmaOp::WmmaStore {
            srcs, addr, stride, ..
        } => {
            o.addr(addr);
            o.srcs(srcs.iter().chain(stride));
        }
        MmaOp::WmmaMma { d, a, b, c, .. } => {
            o.srcs(a.iter().chain(b).chain(c));
            o.writes.extend(d);
        }
        MmaOp::Tf32 { d, a, .. } => {
            o.src(a);
            o.writes.push(*d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Space, Tern, Ty};

    fn inst(op: Op, guard: Option<PSlot>) -> Inst {
        Inst {
            guard: guard.map(|p| (p, true)),
            ..Inst::new(op)
        }
    }

    #[test]
    fn a_load_reads_its_address_and_a_guarded_fma_its_sources_and_guard() {
        let ld = Op::Ld {
            space: Space::Global,
            ty: Ty::F32,
            ds: vec![3, 4],
            addr: Addr {
                base: Some(2),
                off: 8,
            },
            unused: 0,
        };
        let o = operands(&inst(ld, None));
        assert_eq!((o.reads, o.writes), (vec![2], vec![3, 4]));
        let fma = Op::Tern {
            op: Tern::Fma,
            ty: Ty::F32,
            m: crate::ir::FMods {
                rnd: crate::ir::Rnd::Rn,
                ftz: false,
                sat: false,
                approx: false,
            },
            d: 5,
            a: Src::Reg(3),
            b: Src::Imm(0),
            c: Src::Reg(5),
        };
        let o = operands(&inst(fma, Some(1)));
        assert_eq!(
            (o.reads, o.writes, o.pred_reads),
            (vec![3, 5], vec![5], vec![1])
        );
        // A store writes no register; a branch reads only its guard.
        let st = Op::St {
            space: Space::Shared,
            ty: Ty::F32,
            srcs: vec![Src::Reg(7)],
            addr: Addr { base: None, off: 0 },
        };
        let o = operands(&inst(st, None));
        assert_eq!((o.reads, o.writes), (vec![7], vec![]));
        let o = operands(&inst(Op::Bra { target: 0 }, Some(2)));
        assert_eq!((o.reads, o.pred_reads), (vec![], vec![2]));
    }
}
