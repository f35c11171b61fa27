//! The decoded program: what `decode` produces once and `exec` runs many times.
//!
//! Registers are slots in a warp's register file (`u64` per lane; narrower types use the low
//! bits, and every write stores the value zero-extended to its type's width). Predicates live in
//! a separate bank of one 32-bit lane mask per predicate. Branch targets are instruction indices;
//! symbols are already addresses in their state space. Every [`Inst`] carries the learner's source
//! line from the latest `.loc`. Special registers that never change during a launch (`%tid.x`,
//! `%ctaid.y`, `%laneid`, ...) are ordinary slots filled when a warp starts.

mod bulk;
mod mbarrier;
mod mix;
mod operands;
mod special;
mod tensor;
mod types;

pub use bulk::*;
pub use mbarrier::MbarOp;
pub use mix::Mix;
pub use operands::Operands;
pub use special::Special;
pub use tensor::*;
pub use types::*;

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
    /// A load of `ds.len()` elements of `ty` from consecutive addresses. Element `i` with bit `i`
    /// of `unused` set is not an access at all: NVRTC widened a narrower load to a vector and said
    /// so with `.pragma "used_bytes_mask"`; it is neither read nor checked, and its register keeps
    /// its value.
    Ld {
        space: Space,
        ty: Ty,
        ds: Vec<Slot>,
        addr: Addr,
        unused: u32,
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
    /// `bar.sync 0` with no count: `__syncthreads()`, every thread of the block (`exec`).
    Bar,
    /// A named barrier (`named`): `bar.sync`/`barrier.sync` (`wait`) or `bar.arrive`, barrier
    /// `id`, `count` threads (all of the block when absent).
    NamedBar {
        id: Src,
        count: Option<Src>,
        wait: bool,
    },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 n`: no effect on values; its rules are checked.
    SetMaxNreg {
        n: u64,
    },
    /// The `mbarrier` family and `cp.async.mbarrier.arrive` (`mbarrier`).
    Mbar(Box<MbarOp>),
    /// The warp collectives (`bar.warp.sync`, `shfl.sync`, `vote.sync`, `match.sync`): each
    /// waits for the lanes of its member mask (`exec::collective`).
    BarWarp {
        mask: Src,
    },
    Shfl {
        mode: ShflMode,
        d: Slot,
        p: Option<PSlot>,
        a: Src,
        b: Src,
        c: Src,
        mask: Src,
    },
    Vote {
        mode: VoteMode,
        d: Option<Slot>,
        dp: Option<PSlot>,
        a: PSrc,
        mask: Src,
    },
    /// `match.any` (the lanes whose `a` equals this lane's) or `match.all` (all of them, or none,
    /// with `p` saying whether they all agree); `wide`: 64-bit values.
    Match {
        all: bool,
        wide: bool,
        d: Slot,
        p: Option<PSlot>,
        a: Src,
        mask: Src,
    },
    /// `redux.sync.op.type d, a, membermask` (`__reduce_add_sync()` and the others, compute
    /// capability 8.0): every member gets `op` over the 32-bit `a` of all members; `signed` for
    /// `.s32` (`min`, `max`).
    Redux {
        op: ReduxOp,
        signed: bool,
        d: Slot,
        a: Src,
        mask: Src,
    },
    Activemask {
        d: Slot,
    },
    /// A tensor-core or half-precision instruction (`mma`, `ldmatrix`, `cvt` to tf32 and packed
    /// halves, `f16x2` arithmetic): its own family, see `mma`.
    Mma(Box<MmaOp>),
    /// Hopper's warpgroup `wgmma` family, asynchronous (see `wgmma`).
    Wgmma(Box<WgOp>),
    Nop,
    /// `call vprintf, (format, args)`: the local offsets of the call's two parameters (each
    /// holding a generic address) and of its return value, if read.
    Printf {
        fmt: u64,
        args: u64,
        ret: Option<u64>,
    },
    /// `cp.async.{ca,cg}.shared.global [dst], [src], size{, src_size | ignore_src}`: the thread
    /// reads `size` bytes of global memory now (only the first `src_size`, or none where
    /// `ignore_src` holds; zeros for the rest) and they land in shared memory when the thread
    /// waits for their group (see `copy`).
    CpAsync {
        size: u32,
        dst: Addr,
        src: Addr,
        src_size: Option<Src>,
        ignore_src: Option<PSrc>,
    },
    /// The bulk copies (`cp.async.bulk`) and their groups (see `bulk`).
    Bulk(Box<BulkOp>),
    /// `tensormap.replace`, `tensormap.cp_fenceproxy`.
    TensorMap(Box<MapOp>),
    /// `cp.async.commit_group`: the thread's copies since its last commit become a group.
    CpAsyncCommit,
    /// `cp.async.wait_group n` (`wait_all`: a commit, then `n` = 0): the thread's groups land,
    /// all but the `n` most recently committed.
    CpAsyncWait {
        keep: u32,
        commit: bool,
    },
    /// `call` of a device function of this module (`Program::funcs[func]`): `args` are the
    /// caller's local offsets of its argument `.param`s, `ret` that of its return value.
    Call {
        func: u32,
        args: Vec<u64>,
        ret: Option<u64>,
    },
    /// `ret` inside a device function: back to the caller (see `call`).
    Ret,
    /// `trap` (`__trap()`): the launch stops.
    Trap,
    /// `call __assertfail, (message, file, line, function, char_size)`: the local offsets of the
    /// five arguments; a failed `assert`.
    AssertFail {
        args: [u64; 4],
    },
    /// An instruction the simulator does not know; stops the run if a thread reaches it.
    Unsupported {
        why: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub guard: Option<(PSlot, bool)>,
    pub op: Op,
    /// `.file` index and learner line (0: no `.loc`); where `line` is in a function NVRTC inlined,
    /// the call's line (0: none) and `.file` (in a header's function, the learner's call and file,
    /// `inline`), and 1 + the index in `Program::vias` of the header calls between (0: none).
    pub file: u32,
    pub line: u32,
    pub call: u32,
    pub call_file: u32,
    pub via: u32,
    /// The PTX text of the instruction, for diagnostics.
    pub text: u32,
    /// Whether it is not a `wgmma` and names a register that a `wgmma.mma_async` of its
    /// function reads or writes asynchronously (an accumulator, an A fragment): `ptxas` makes
    /// it wait for the warp's `wgmma`s in flight, and so does the simulator (see `wgmma`).
    pub wgmma_sync: bool,
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
    /// The learner's `__shared__` declarations read from the CUDA source (`declared`), where
    /// the caller gave them: they name an array's elements in its declared type and shape.
    pub declared: Vec<crate::declared::SharedDecl>,
    /// The learner's pointers into those arrays (`crate::declared::aliases`), for the same end.
    pub aliases: Vec<crate::declared::SharedAlias>,
    /// The shared array each access instruction is attributed to (`provenance`).
    pub access_array: Vec<u32>,
    pub consts: Vec<Symbol>,
    pub const_init: Vec<u8>,
    /// Module `.global` variables and their initial bytes.
    pub globals: Vec<(Symbol, Vec<u8>)>,
    pub locals: Vec<Symbol>,
    pub local_bytes: u64,
    pub files: Vec<(u32, String)>,
    /// Header calls (`.file`, line) between a learner's call and a header line, outermost first.
    pub vias: Vec<Vec<(u32, u32)>>,
    /// Device functions called by the kernel, their code before the kernel's own.
    pub funcs: Vec<Func>,
    /// The kernel's first instruction.
    pub start: u32,
}

impl Program {
    /// The `.file` name of index `file` as the runner gave it to NVRTC. `kernels::nvrtc` already
    /// writes it back relative; for PTX compiled elsewhere (NVRTC prefixes a relative program name
    /// with its working directory), the current directory is stripped as well.
    pub fn file_name(&self, file: u32) -> String {
        let Some((_, p)) = self.files.iter().find(|(i, _)| *i == file) else {
            return "kernel.cu".to_string();
        };
        let cwd = std::env::current_dir().ok();
        cwd.as_deref()
            .and_then(|d| d.to_str())
            .and_then(|d| p.strip_prefix(d))
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(p)
            .to_string()
    }
}

/// A decoded device function: where its code starts, and the registers, predicates and local
/// bytes (its parameters and return value among them) that are its own, which a call saves
/// and its `ret` restores, so a recursive call has a frame of its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Func {
    pub name: String,
    pub pc: u32,
    pub regs: std::ops::Range<u32>,
    pub preds: std::ops::Range<u32>,
    pub local: std::ops::Range<u64>,
    /// (local offset, bytes) of each parameter, and of the return value.
    pub params: Vec<(u64, u64)>,
    pub ret: Option<(u64, u64)>,
}

/// The tensor-core pipe an instruction runs on, for a profile's tensor bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorPipe {
    /// `mma.sync` (and `wmma.mma`, which is made of it): one warp's product.
    MmaSync,
    /// `wgmma.mma_async`: a warpgroup's product, issued by each of its four warps.
    Wgmma,
}

impl Op {
    /// The multiply-adds of one warp's issue of this tensor-core instruction, with its pipe and
    /// operand format: M x N x K of its shape (`mma.sync` m16n8k8 or m16n8k16, `wmma.mma`
    /// m16n16k8 or m16n16k16); for `wgmma`, the warp's 16 of the warpgroup's 64 rows.
    pub fn tensor_macs(&self) -> Option<(TensorPipe, Elem, u64)> {
        match self {
            Op::Mma(m) => match **m {
                MmaOp::Mma { elem, k, .. } => {
                    Some((TensorPipe::MmaSync, elem, 16 * 8 * u64::from(k)))
                }
                MmaOp::WmmaMma { elem, .. } => {
                    Some((TensorPipe::MmaSync, elem, 16 * 16 * u64::from(elem.k())))
                }
                _ => None,
            },
            Op::Wgmma(w) => match **w {
                WgOp::Mma { elem, n, .. } => {
                    Some((TensorPipe::Wgmma, elem, wgmma_warp_macs(elem, n)))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The tensor-core work of one warp's issue of this instruction: its pipe, and its
    /// multiply-adds x 2 counted in tf32 terms (a product of 16-bit operands counts half: the
    /// tensor cores run it at twice tf32's rate).
    pub fn tensor_work(&self) -> Option<(TensorPipe, u64)> {
        let (pipe, elem, macs) = self.tensor_macs()?;
        let flop = 2 * macs;
        Some((pipe, if elem == Elem::Tf32 { flop } else { flop / 2 }))
    }
}
