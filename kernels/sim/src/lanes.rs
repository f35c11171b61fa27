//! One warp's registers over the lanes that execute an instruction ([`Ctx`]): what every
//! instruction family reads its operands from and writes its results to, lane by lane, and how
//! a family reports a fault ([`StepResult`]). Plain data beneath the families and the machine.

use crate::fault::Fault;
use ptx::ir::*;

/// One 64-bit value per lane of a warp.
pub(super) type Lanes = [u64; 32];

/// Split borrows of a warp for `step`.
pub(super) struct WarpRegs<'a> {
    pub regs: &'a mut [u64],
    pub preds: &'a mut [u32],
}

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

pub(super) fn oob(
    write: bool,
) -> impl Fn((crate::memory::MemFault, usize)) -> (Fault, Option<usize>) {
    move |(mem, lane)| (Fault::OutOfBounds { write, mem }, Some(lane))
}
