//! Atomic read-modify-write operations (`atom`, `red`) on one lane's old value.
//!
//! `exec` applies them lane by lane in lane order, so the result is deterministic. `inc` and
//! `dec` wrap as PTX specifies: `inc` gives 0 once the old value reaches `b`, `dec` gives `b`
//! when the old value is 0 or above `b`. Float `add` rounds to nearest even.

use crate::ops::bin;
use ptx::ir::{AtomOp, Bin, FMods, Rnd, Ty};

/// The new value stored for old value `old` and operands `b` (and `c` for `cas`).
pub fn apply(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let m = FMods {
        rnd: Rnd::Rn,
        ftz: false,
        sat: false,
        approx: false,
    };
    let mask = ty.mask();
    match op {
        AtomOp::Add => bin(Bin::Add, ty, m, old, b),
        AtomOp::Min => bin(Bin::Min, ty, m, old, b),
        AtomOp::Max => bin(Bin::Max, ty, m, old, b),
        AtomOp::And => old & b & mask,
        AtomOp::Or => (old | b) & mask,
        AtomOp::Xor => (old ^ b) & mask,
        AtomOp::Exch => b & mask,
        AtomOp::Cas => {
            if old & mask == b & mask {
                c & mask
            } else {
                old
            }
        }
        AtomOp::Inc => {
            if old & mask >= b & mask {
                0
            } else {
                (old + 1) & mask
            }
        }
        AtomOp::Dec => {
            if old & mask == 0 || old & mask > b & mask {
                b & mask
            } else {
                (old - 1) & mask
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inc_and_dec_wrap_at_the_bound() {
        assert_eq!(apply(AtomOp::Inc, Ty::U32, 5, 5, 0), 0);
        assert_eq!(apply(AtomOp::Inc, Ty::U32, 4, 5, 0), 5);
        assert_eq!(apply(AtomOp::Dec, Ty::U32, 0, 7, 0), 7);
        assert_eq!(apply(AtomOp::Dec, Ty::U32, 9, 7, 0), 7);
        assert_eq!(apply(AtomOp::Dec, Ty::U32, 3, 7, 0), 2);
    }

    #[test]
    fn cas_swaps_only_on_match() {
        assert_eq!(apply(AtomOp::Cas, Ty::B32, 3, 3, 9), 9);
        assert_eq!(apply(AtomOp::Cas, Ty::B32, 4, 3, 9), 4);
    }

    #[test]
    fn signed_min_and_float_add() {
        assert_eq!(apply(AtomOp::Min, Ty::S32, 5, 0xffff_ffff, 0), 0xffff_ffff);
        assert_eq!(apply(AtomOp::Min, Ty::U32, 5, 0xffff_ffff, 0), 5);
        let r = apply(
            AtomOp::Add,
            Ty::F32,
            1.5f32.to_bits().into(),
            2.25f32.to_bits().into(),
            0,
        );
        assert_eq!(f32::from_bits(r as u32), 3.75);
    }
}
