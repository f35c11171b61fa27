//! The tensor-core operations as decoded: `mma.sync`, `ldmatrix` and the half-precision
//! arithmetic around them ([`MmaOp`]), the `wmma` fragments and their layout (which lane holds
//! which element, read by the decoder and the simulator alike), and `wgmma` ([`WgOp`]).

use super::types::*;

/// A decoded tensor-core or half-precision instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum MmaOp {
    /// `mma.sync.aligned.m16n8k{8,16}.row.col.f32.E.E.f32 {d}, {a}, {b}, {c}`.
    Mma {
        elem: Elem,
        k: u32,
        d: [Slot; 4],
        a: [Src; 4],
        b: [Src; 2],
        c: [Src; 4],
    },
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 {d}, [addr]`.
    Ldmatrix {
        trans: bool,
        space: Space,
        ds: Vec<Slot>,
        addr: Addr,
    },
    /// Half-precision arithmetic; `x2` for the packed forms.
    Half {
        op: HalfOp,
        ty: Ty,
        x2: bool,
        m: FMods,
        d: Slot,
        srcs: [Src; 3],
    },
    /// `cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b`.
    Pack {
        ty: Ty,
        relu: bool,
        d: Slot,
        a: Src,
        b: Src,
    },
    /// `wmma.load.{a,b,c}`: a fragment from memory (see `wmma` for who holds what).
    WmmaLoad {
        frag: Frag,
        elem: Elem,
        row: bool,
        space: Space,
        ds: Vec<Slot>,
        addr: Addr,
        stride: Option<Src>,
    },
    /// `wmma.store.d`: an f32 accumulator fragment to memory.
    WmmaStore {
        row: bool,
        space: Space,
        srcs: Vec<Src>,
        addr: Addr,
        stride: Option<Src>,
    },
    /// `wmma.mma`: D = A B + C over fragments (the layouts only say how they were loaded).
    WmmaMma {
        elem: Elem,
        d: Vec<Slot>,
        a: Vec<Src>,
        b: Vec<Src>,
        c: Vec<Src>,
    },
    /// `cvt.{rna,rn,rz}.tf32.f32 d, a`.
    Tf32 {
        away: bool,
        even: bool,
        d: Slot,
        a: Src,
    },
}

/// A half-precision operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfOp {
    Add,
    Sub,
    Mul,
    Fma,
    Neg,
    Abs,
    Min,
    Max,
}

impl HalfOp {
    pub fn parse(mn: &str) -> Option<HalfOp> {
        Some(match mn {
            "add" => HalfOp::Add,
            "sub" => HalfOp::Sub,
            "mul" => HalfOp::Mul,
            "fma" => HalfOp::Fma,
            "neg" => HalfOp::Neg,
            "abs" => HalfOp::Abs,
            "min" => HalfOp::Min,
            "max" => HalfOp::Max,
            _ => return None,
        })
    }
    /// Source operands the operation reads.
    pub fn arity(self) -> usize {
        match self {
            HalfOp::Neg | HalfOp::Abs => 1,
            HalfOp::Fma => 3,
            _ => 2,
        }
    }
}

/// An operand format of the tensor cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Tf32,
    F16,
    Bf16,
}

impl Elem {
    /// Bits per element in a register (tf32 takes a whole word).
    pub fn bits(self) -> u32 {
        if self == Elem::Tf32 { 32 } else { 16 }
    }

    /// The K of the tensor cores' shapes in this format: m16n8k8 (and wmma's m16n16k8) for tf32,
    /// k16 for the 16-bit formats.
    pub fn k(self) -> u32 {
        if self == Elem::Tf32 { 8 } else { 16 }
    }
}

/// Which matrix a fragment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frag {
    A,
    B,
    C,
}

/// Elements per lane of a fragment (including repeats).
pub fn count(frag: Frag, elem: Elem) -> usize {
    match (frag, elem) {
        (Frag::C, _) | (_, Elem::Bf16) => 8,
        (_, Elem::Tf32) => 4,
        (_, Elem::F16) => 16,
    }
}

/// The (row, column) of element `i` of `lane`'s fragment, in the matrix's own coordinates
/// (A: 16 x k, B: k x 16, C: 16 x 16).
pub fn coord(frag: Frag, elem: Elem, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    let j = i % 8;
    match (frag, elem) {
        (Frag::C, _) => (g + 8 * (i / 2 % 2), 2 * t + i % 2 + 8 * (i / 4)),
        (Frag::A, Elem::Tf32) => (g + 8 * (i % 2), t + 4 * (i / 2)),
        (Frag::B, Elem::Tf32) => (t + 4 * (i % 2), g + 8 * (i / 2)),
        (Frag::A, _) => (g + 8 * (j / 2 % 2), 2 * t + j % 2 + 8 * (j / 4)),
        (Frag::B, _) => (2 * t + j % 2 + 8 * (j / 2 % 2), g + 8 * (j / 4)),
    }
}

/// Registers of a fragment and the elements each holds.
pub fn per_reg(frag: Frag, elem: Elem) -> usize {
    if frag != Frag::C && elem != Elem::Tf32 {
        2
    } else {
        1
    }
}

/// Where A comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum AFrom {
    Desc(Src),
    Regs([Src; 4]),
}

/// A decoded `wgmma` instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum WgOp {
    Fence,
    Commit,
    Wait {
        keep: u32,
    },
    Mma {
        elem: Elem,
        n: u32,
        d: Vec<Slot>,
        a: AFrom,
        b: Src,
        scale_d: PSrc,
        neg_a: bool,
        neg_b: bool,
    },
}

impl WgOp {
    /// The registers an `mma_async` reads or writes after it was issued: D, and A's fragment.
    pub fn async_regs(&self) -> Vec<Slot> {
        let WgOp::Mma { d, a, .. } = self else {
            return Vec::new();
        };
        let mut r = d.clone();
        if let AFrom::Regs(s) = a {
            r.extend(s.iter().filter_map(|x| match x {
                Src::Reg(s) => Some(*s),
                _ => None,
            }));
        }
        r
    }
}

/// The multiply-adds one warp does of a `wgmma` of width `n`: its 16 of the warpgroup's 64 rows,
/// times N times K.
pub fn wgmma_warp_macs(elem: Elem, n: u32) -> u64 {
    16 * u64::from(n) * u64::from(elem.k())
}
