//! The instruction mix (`runner profile`'s): which class each PTX instruction counts under (FMA,
//! other float, integer and address, the loads and stores of each memory space, control, other),
//! decided once per instruction of the program from its decoded operation ([`Op::mix`]), and the
//! SASS instructions `ptxas` adds beyond it ([`Op::sass_extra`]). The profiler counts issues per
//! instruction; the table adds them up by these classes.

use super::{Bin, Op, Space, Src, Tern, Ty};

/// What an instruction is, for the instruction mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mix {
    Fma,
    Float,
    IntAddress,
    GlobalMem,
    SharedMem,
    ConstMem,
    Control,
    Other,
}

impl Mix {
    pub const ALL: [Mix; 8] = [
        Mix::Fma,
        Mix::Float,
        Mix::IntAddress,
        Mix::GlobalMem,
        Mix::SharedMem,
        Mix::ConstMem,
        Mix::Control,
        Mix::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mix::Fma => "FMA",
            Mix::Float => "other float",
            Mix::IntAddress => "integer and address",
            Mix::GlobalMem => "global loads and stores",
            Mix::SharedMem => "shared loads and stores",
            Mix::ConstMem => "constant loads",
            Mix::Control => "branches and barriers",
            Mix::Other => "other",
        }
    }
}

impl Op {
    /// The class this operation counts under in the instruction mix.
    pub fn mix(&self) -> Mix {
        let float = |ty: &Ty| ty.float();
        match self {
            Op::Tern { op: Tern::Fma, .. } => Mix::Fma,
            Op::Tern {
                op: Tern::MadLo,
                ty,
                ..
            } if float(ty) => Mix::Fma,
            Op::Un { ty, .. } | Op::Bin { ty, .. } | Op::Tern { ty, .. } if float(ty) => Mix::Float,
            Op::Un { .. }
            | Op::Bin { .. }
            | Op::Tern { .. }
            | Op::Bfi { .. }
            | Op::Setp { .. }
            | Op::Set { .. }
            | Op::Selp { .. }
            | Op::PredOp { .. }
            | Op::Cvt { .. }
            | Op::Cvta { .. }
            | Op::Pack { .. }
            | Op::Unpack { .. } => Mix::IntAddress,
            Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => match space {
                Space::Shared => Mix::SharedMem,
                Space::Const => Mix::ConstMem,
                Space::Param => Mix::IntAddress,
                _ => Mix::GlobalMem,
            },
            Op::CpAsync { .. } | Op::Bulk(_) => Mix::GlobalMem,
            Op::Bra { .. } | Op::Exit | Op::Bar | Op::BarWarp { .. } => Mix::Control,
            _ => Mix::Other,
        }
    }

    /// The SASS instructions beyond its own one that `ptxas` makes of `op`, where the PTX's count
    /// is far from the SASS's: a 32-bit integer division or remainder by a register. The GPU has no
    /// integer divider; the quotient comes from a float reciprocal (`I2F`, `MUFU.RCP`, `F2I`) and
    /// about a dozen multiply-adds and corrections, and a signed one adds the signs' handling.
    /// Counted with `nvdisasm` on the cubin NVRTC 13.0 makes for sm_90 from a kernel computing one
    /// `a / b` or `a % b` (b a parameter) against the same kernel computing `a`: 24 instructions
    /// more for `div.s32`, 22 for `rem.s32`, 19 for `div.u32` and 18 for `rem.u32` (bench/PROFILE.md).
    /// `ptxas` recomputes the reciprocal at every division, even of a divisor fixed for the launch
    /// (issue 36's learners' kernels: 18 `MUFU.RCP` in one of them). A division by an immediate was
    /// already turned into a multiply and shifts by NVRTC; 64-bit division (a call in SASS) is
    /// left at one.
    pub fn sass_extra(&self) -> u64 {
        match self {
            Op::Bin {
                op: op @ (Bin::Div | Bin::Rem),
                ty,
                b: Src::Reg(_),
                ..
            } if !ty.float() && ty.bits() == 32 => match (ty.signed(), op) {
                (true, Bin::Div) => 23,
                (true, _) => 21,
                (false, Bin::Div) => 18,
                (false, _) => 17,
            },
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{FMods, Rnd};

    fn bin(op: Bin, ty: Ty, b: Src) -> Op {
        Op::Bin {
            op,
            ty,
            m: FMods {
                rnd: Rnd::Default,
                ftz: false,
                sat: false,
                approx: false,
            },
            d: 0,
            a: Src::Imm(7),
            b,
        }
    }

    #[test]
    fn integer_division_by_a_register_counts_the_instructions_sass_spells_it_in() {
        let r = Src::Reg(1);
        assert_eq!(bin(Bin::Div, Ty::S32, r).sass_extra(), 23);
        assert_eq!(bin(Bin::Rem, Ty::U32, r).sass_extra(), 17);
        // By an immediate (already a multiply), in 64 bits, in floats, or no division: the PTX's one.
        assert_eq!(bin(Bin::Div, Ty::S32, Src::Imm(3)).sass_extra(), 0);
        assert_eq!(bin(Bin::Div, Ty::S64, r).sass_extra(), 0);
        assert_eq!(bin(Bin::Div, Ty::F32, r).sass_extra(), 0);
        assert_eq!(bin(Bin::Add, Ty::S32, r).sass_extra(), 0);
    }
}
