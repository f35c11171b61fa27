//! The instruction mix of `runner profile`: which class each PTX instruction counts under (FMA,
//! other float, integer and address, the loads and stores of each memory space, control, other),
//! decided once per instruction of the program from its decoded operation. The profiler counts
//! issues per instruction; the table adds them up by these classes.

use ptx::ir::{Op, Space, Tern, Ty};

/// What an instruction is, for the instruction mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Fma,
    Float,
    IntAddress,
    GlobalMem,
    SharedMem,
    ConstMem,
    Control,
    Other,
}

impl Class {
    pub const ALL: [Class; 8] = [
        Class::Fma,
        Class::Float,
        Class::IntAddress,
        Class::GlobalMem,
        Class::SharedMem,
        Class::ConstMem,
        Class::Control,
        Class::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Fma => "FMA",
            Class::Float => "other float",
            Class::IntAddress => "integer and address",
            Class::GlobalMem => "global loads and stores",
            Class::SharedMem => "shared loads and stores",
            Class::ConstMem => "constant loads",
            Class::Control => "branches and barriers",
            Class::Other => "other",
        }
    }

    pub fn of(op: &Op) -> Class {
        let float = |ty: &Ty| ty.float();
        match op {
            Op::Tern { op: Tern::Fma, .. } => Class::Fma,
            Op::Tern {
                op: Tern::MadLo,
                ty,
                ..
            } if float(ty) => Class::Fma,
            Op::Un { ty, .. } | Op::Bin { ty, .. } | Op::Tern { ty, .. } if float(ty) => {
                Class::Float
            }
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
            | Op::Unpack { .. } => Class::IntAddress,
            Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => match space {
                Space::Shared => Class::SharedMem,
                Space::Const => Class::ConstMem,
                Space::Param => Class::IntAddress,
                _ => Class::GlobalMem,
            },
            Op::CpAsync { .. } | Op::Bulk(_) => Class::GlobalMem,
            Op::Bra { .. } | Op::Exit | Op::Bar | Op::BarWarp { .. } => Class::Control,
            _ => Class::Other,
        }
    }
}
