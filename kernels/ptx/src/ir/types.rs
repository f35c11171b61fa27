//! The operand types and operation names of the IR: PTX types ([`Ty`]), state spaces, source
//! operands and addresses, rounding and float modifiers, and the names of the unary, binary,
//! ternary, comparison, atomic, shuffle and vote operations. `ir` re-exports them all; they
//! are plain `Copy` data decoded once from the opcode's modifiers.

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
    /// `dp4a.atype.btype`: c plus the four products of a's and b's bytes (`.s32`: signed bytes).
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    /// `dp2a.lo/.hi.atype.btype`: c plus the two products of a's 16-bit halves with b's bytes 0-1
    /// (`.lo`) or 2-3 (`.hi`).
    Dp2a {
        hi: bool,
        a_signed: bool,
        b_signed: bool,
    },
    /// `fns.b32 d, mask, base, offset`: the position of the offset-th set bit of mask from bit
    /// base (upwards for a positive offset, downwards for a negative one), or 0xffffffff.
    Fns,
    Sad,
    /// `shf.l` / `shf.r` (funnel shift of the 64 bits `b:a`), `.clamp` or `.wrap`.
    Shf {
        left: bool,
        clamp: bool,
    },
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
    /// `elect.sync d|p, membermask`: the lowest lane taking part is the leader (`d` its lane id
    /// for every lane, `p` true in it alone).
    Elect,
}

/// The operation of `redux.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
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

/// The bits of an immediate word read as type `ty` (floats: `0f`/`0d` hex or decimal).
pub fn imm_bits(w: &str, ty: Ty) -> Option<u64> {
    let (neg, w) = w.strip_prefix('-').map_or((false, w), |r| (true, r));
    let hex = |h: &str| u64::from_str_radix(h, 16).ok();
    let bits = if let Some(h) = w.strip_prefix("0f").or(w.strip_prefix("0F")) {
        let b = hex(h)? as u32;
        match ty {
            Ty::F64 => f64::from(f32::from_bits(b)).to_bits(),
            _ => u64::from(b),
        }
    } else if let Some(h) = w.strip_prefix("0d").or(w.strip_prefix("0D")) {
        let b = hex(h)?;
        match ty {
            Ty::F32 => u64::from((f64::from_bits(b) as f32).to_bits()),
            _ => b,
        }
    } else if ty == Ty::F32 && !w.starts_with("0x") {
        u64::from(w.parse::<f32>().ok()?.to_bits())
    } else if ty == Ty::F64 && !w.starts_with("0x") {
        w.parse::<f64>().ok()?.to_bits()
    } else {
        crate::parse::parse_int(w)? as u64
    };
    Some(match (neg, ty) {
        (false, _) => bits,
        (true, Ty::F32) => bits ^ 0x8000_0000,
        (true, Ty::F64) => bits ^ (1 << 63),
        (true, _) => bits.wrapping_neg(),
    })
}
