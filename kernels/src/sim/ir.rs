//! The decoded program: what `decode` produces once and `exec` runs many times.
//!
//! Registers are slots in a warp's register file (`u64` per lane; narrower types use the low
//! bits, and every write stores the value zero-extended to its type's width). Predicates live in
//! a separate bank of one 32-bit lane mask per predicate. Branch targets are instruction indices;
//! symbols are already addresses in their state space. Every [`Inst`] carries the learner's source
//! line from the latest `.loc`. Special registers that never change during a launch (`%tid.x`,
//! `%ctaid.y`, `%laneid`, ...) are ordinary slots filled when a warp starts.

/// A register slot (index into the warp register file).
pub type Slot = u32;
/// A predicate slot (index into the warp predicate bank).
pub type PSlot = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    F32,
    F64,
    Pred,
}

impl Ty {
    pub fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "b128" => Ty::B128,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "f16x2" => Ty::F16x2,
            "bf16" => Ty::BF16,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }
    pub fn bits(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 64,
            Ty::B128 => 128,
            Ty::Pred => 1,
        }
    }
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }
    pub fn signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }
    pub fn float(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64 | Ty::F16x2)
    }
    /// The mask of this type's bits in a `u64` register.
    pub fn mask(self) -> u64 {
        match self.bits() {
            b if b >= 64 => u64::MAX,
            b => (1u64 << b) - 1,
        }
    }
}

/// A state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Generic,
    Global,
    Shared,
    Const,
    Param,
    Local,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Generic => "generic",
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Const => "constant",
            Space::Param => "parameter",
            Space::Local => "local",
        }
    }
}

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Reg(Slot),
    Imm(u64),
    /// `%clock`, `%clock64`, `%globaltimer`: the warp's instruction count.
    Clock,
}

/// A predicate source: a slot (possibly negated) or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PSrc {
    Slot(PSlot, bool),
    Const(bool),
}

/// `[base + off]`; `base` is `None` for an absolute address (a symbol already folded into `off`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr {
    pub base: Option<Slot>,
    pub off: i64,
}

/// Rounding mode of a float operation or conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rnd {
    /// No rounding modifier: the instruction's default.
    Default,
    Rn,
    Rz,
    Rm,
    Rp,
    /// Integer rounding of a float (`.rni`, `.rzi`, `.rmi`, `.rpi`).
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Un {
    Mov,
    Neg,
    Abs,
    Not,
    Cnot,
    Popc,
    Clz,
    Brev,
    Bfind,
    BfindShift,
    Sqrt,
    Rsqrt,
    Rcp,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Sat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    AddSat,
    SubSat,
    Copysign,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tern {
    MadLo,
    MadHi,
    MadWide,
    Fma,
    Bfe,
    Prmt,
    Dp4a,
    Sad,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
    And,
    Or,
    Xor,
    Inc,
    Dec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// Float modifiers decoded once: rounding, flush-to-zero, saturation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FMods {
    pub rnd: Rnd,
    pub ftz: bool,
    pub sat: bool,
    /// `.approx`/`.full`: documented approximations (computed here correctly rounded).
    pub approx: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Un {
        op: Un,
        ty: Ty,
        m: FMods,
        d: Slot,
        a: Src,
    },
    Bin {
        op: Bin,
        ty: Ty,
        m: FMods,
        d: Slot,
        a: Src,
        b: Src,
    },
    Tern {
        op: Tern,
        ty: Ty,
        m: FMods,
        d: Slot,
        a: Src,
        b: Src,
        c: Src,
    },
    Bfi {
        ty: Ty,
        d: Slot,
        f: Src,
        b: Src,
        pos: Src,
        len: Src,
    },
    Setp {
        cmp: Cmp,
        ty: Ty,
        ftz: bool,
        p: PSlot,
        q: Option<PSlot>,
        a: Src,
        b: Src,
        comb: Option<(BoolOp, PSrc)>,
    },
    /// `set.cmp.dtype.stype`: all ones (or 1.0f) where true.
    Set {
        cmp: Cmp,
        ty: Ty,
        dty: Ty,
        d: Slot,
        a: Src,
        b: Src,
    },
    Selp {
        ty: Ty,
        d: Slot,
        a: Src,
        b: Src,
        p: PSrc,
    },
    /// `and/or/xor/not/mov.pred`; `b` absent for `not` and `mov`.
    PredOp {
        op: Option<BoolOp>,
        not: bool,
        d: PSlot,
        a: PSrc,
        b: Option<PSrc>,
    },
    /// Predicate to/from register: `selp`-free moves NVRTC emits for `%p` <-> `%r`.
    Cvt {
        dty: Ty,
        sty: Ty,
        m: FMods,
        d: Slot,
        a: Src,
    },
    /// `mov.b64 %rd, {%r1, %r2}`: pack parts, lowest first.
    Pack {
        part_bits: u32,
        d: Slot,
        parts: Vec<Src>,
    },
    /// `mov.b64 {%r1, %r2}, %rd`: unpack, `None` for `_`.
    Unpack {
        part_bits: u32,
        ds: Vec<Option<Slot>>,
        a: Src,
    },
    Ld {
        space: Space,
        ty: Ty,
        ds: Vec<Slot>,
        addr: Addr,
    },
    St {
        space: Space,
        ty: Ty,
        srcs: Vec<Src>,
        addr: Addr,
    },
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: Option<Slot>,
        addr: Addr,
        b: Src,
        c: Option<Src>,
    },
    /// `cvta.space` (to generic) or `cvta.to.space` (from generic).
    Cvta {
        to: bool,
        space: Space,
        d: Slot,
        a: Src,
    },
    Bra {
        target: u32,
    },
    Exit,
    Bar,
    BarWarp,
    Shfl {
        mode: ShflMode,
        d: Slot,
        p: Option<PSlot>,
        a: Src,
        b: Src,
        c: Src,
    },
    Vote {
        mode: VoteMode,
        d: Option<Slot>,
        dp: Option<PSlot>,
        a: PSrc,
    },
    Activemask {
        d: Slot,
    },
    Nop,
    /// An instruction the simulator does not know; stops the run if a thread reaches it.
    Unsupported {
        why: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub guard: Option<(PSlot, bool)>,
    pub op: Op,
    /// `.file` index and learner line (0 when there was no `.loc`).
    pub file: u32,
    pub line: u32,
    /// The PTX text of the instruction, for diagnostics.
    pub text: u32,
}

/// A named byte range in a state space, for diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    pub name: String,
    pub space: Space,
    pub offset: u64,
    pub size: u64,
}

/// One decoded kernel and the module state it needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub insts: Vec<Inst>,
    /// Opcode text of each instruction (indexed by `Inst::text`).
    pub texts: Vec<String>,
    pub nregs: u32,
    pub npreds: u32,
    /// Slots of the per-thread and per-block special registers, filled at warp start.
    pub specials: Vec<(Slot, Special)>,
    /// Parameter space: (name, offset, size) in parameter order.
    pub params: Vec<(String, u64, u64)>,
    pub param_bytes: u64,
    /// Static shared symbols; the dynamic (`.extern`) array starts at `dyn_shared_offset`.
    pub shared: Vec<Symbol>,
    pub static_shared: u64,
    pub dyn_shared_offset: u64,
    pub dyn_shared_name: Option<String>,
    pub consts: Vec<Symbol>,
    pub const_init: Vec<u8>,
    /// Module `.global` variables and their initial bytes.
    pub globals: Vec<(Symbol, Vec<u8>)>,
    pub locals: Vec<Symbol>,
    pub local_bytes: u64,
    pub files: Vec<(u32, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Tid(usize),
    Ntid(usize),
    Ctaid(usize),
    Nctaid(usize),
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    LanemaskLt,
    LanemaskLe,
    LanemaskEq,
    LanemaskGe,
    LanemaskGt,
}

impl Special {
    pub fn parse(name: &str) -> Option<Special> {
        let dim = |s: &str| match s {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        let (base, d) = name
            .split_once('.')
            .map_or((name, None), |(b, d)| (b, dim(d)));
        Some(match (base, d) {
            ("%tid", Some(d)) => Special::Tid(d),
            ("%ntid", Some(d)) => Special::Ntid(d),
            ("%ctaid", Some(d)) => Special::Ctaid(d),
            ("%nctaid", Some(d)) => Special::Nctaid(d),
            ("%laneid", None) => Special::Laneid,
            ("%warpid", None) => Special::Warpid,
            ("%nwarpid", None) => Special::Nwarpid,
            ("%smid", None) => Special::Smid,
            ("%lanemask_lt", None) => Special::LanemaskLt,
            ("%lanemask_le", None) => Special::LanemaskLe,
            ("%lanemask_eq", None) => Special::LanemaskEq,
            ("%lanemask_ge", None) => Special::LanemaskGe,
            ("%lanemask_gt", None) => Special::LanemaskGt,
            _ => return None,
        })
    }
}
