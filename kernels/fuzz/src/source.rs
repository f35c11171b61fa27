//! A random kernel: `fuzz(const unsigned* in, unsigned* out, int n)`, one seed one source.
//!
//! Each thread reads four words of `in` (two floats, an int, random bits), builds variables of
//! every type from them through `expr`, through branches that diverge within a warp (`if`/`else`,
//! loops with data-dependent trip counts and `break`), and, where the whole block is converged,
//! through shared memory between barriers, warp shuffles, votes and matches (also one in each
//! branch of an `if` that divides the warp). Shared-memory atomics whose
//! result does not depend on their order (integer add, and, or, xor, min, max) accumulate per
//! block, and a few threads `printf`. Every variable's bits end in the thread's slots of `out`
//! (64-bit ones in two words), so a single wrong bit anywhere shows. The block has a multiple
//! of 32 threads, so the warp collectives' full mask is always right.

use crate::expr::{Scope, T, TYPES};
use crate::used::Used;
use spec::Rng;

/// One generated kernel and its launch: `blocks` blocks of `threads`, `slots` words per thread.
pub struct Kernel {
    pub code: String,
    pub blocks: u32,
    pub threads: u32,
    pub slots: usize,
}

pub(super) struct Gen<'r> {
    pub(super) s: Scope<'r>,
    body: String,
    pub(super) fresh: usize,
    atomics: bool,
    /// Whether the families of `families` may appear, and which did.
    families: bool,
    pub(super) used: Used,
    /// Whether the last `cp.async` block left groups in flight (`families`).
    pub(super) cp_in_flight: bool,
}

impl Gen<'_> {
    pub(super) fn line(&mut self, indent: usize, text: &str) {
        self.body += &"    ".repeat(indent);
        self.body += text;
        self.body += "\n";
    }

    /// A new variable of type `t` holding `value`.
    pub(super) fn define(&mut self, indent: usize, t: T, value: String) {
        let name = format!("{}{}", t.prefix(), self.fresh);
        self.fresh += 1;
        self.line(indent, &format!("{} {name} = {value};", t.c()));
        self.s.vars.push((t, name));
    }

    fn some_type(&mut self) -> T {
        TYPES[self.s.below(TYPES.len())]
    }

    /// Statements that may sit in divergent code: assignments to variables in scope, nested
    /// branches and loops, atomics and `printf`.
    fn divergent(&mut self, indent: usize, depth: u32) {
        for _ in 0..1 + self.s.below(3) {
            match self.s.below(10) {
                0 if depth > 0 => {
                    let c = self.s.cond(2);
                    self.line(indent, &format!("if ({c}) {{"));
                    self.divergent(indent + 1, depth - 1);
                    self.line(indent, "} else {");
                    self.divergent(indent + 1, depth - 1);
                    self.line(indent, "}");
                }
                1 if depth > 0 => {
                    let n = self.s.expr(T::U32, 1);
                    let k = format!("k{}", self.fresh);
                    self.fresh += 1;
                    self.line(
                        indent,
                        &format!("for (int {k} = 0; {k} < (int)(({n}) & 7u); {k}++) {{"),
                    );
                    self.s.vars.push((T::I32, k));
                    self.divergent(indent + 1, depth - 1);
                    let c = self.s.cond(1);
                    self.line(indent + 1, &format!("if ({c}) break;"));
                    self.s.vars.pop();
                    self.line(indent, "}");
                }
                2 if self.atomics => {
                    // One operation per slot (ATOMIC_SLOTS), so that no word sees two operations
                    // that do not commute without a barrier between them.
                    let (op, t, arr, slot) = ATOMIC_SLOTS[self.s.below(ATOMIC_SLOTS.len())];
                    let v = self.s.expr(t, 2);
                    self.line(indent, &format!("{op}(&{arr}[{slot}], {v});"));
                }
                3 => self.printf(indent),
                _ => {
                    let t = self.some_type();
                    // Never a loop counter: the loops stay short.
                    let target = loop {
                        let v = self.s.var(t);
                        if !v.starts_with('k') {
                            break v;
                        }
                    };
                    let value = self.s.expr(t, 3);
                    self.line(indent, &format!("{target} = {value};"));
                }
            }
        }
    }

    fn printf(&mut self, indent: usize) {
        let (i, u, l) = (self.s.var(T::I32), self.s.var(T::U32), self.s.var(T::I64));
        let (f, d) = (self.s.var(T::F32), self.s.var(T::F64));
        let fmt = self.s.pick(&["%f", "%.3e", "%g", "%.9g", "%a"]);
        let gate = 13 + self.s.below(20);
        self.line(
            indent,
            &format!(
                "if ((blockIdx.x * blockDim.x + threadIdx.x) % {gate} == 0) printf(\"t%u %d %u %x %lld {fmt} {fmt}\\n\", threadIdx.x, {i}, {u}, {u}, {l}, {f}, {d});"
            ),
        );
    }

    /// A shuffle of a value of type `t` over the full mask: `kind` 0 to 3 is `__shfl_sync`,
    /// `_up`, `_down`, `_xor`, at `width`.
    fn collective(&mut self, t: T, kind: usize, width: u32) -> String {
        let v = self.s.expr(t, 2);
        match kind {
            0 => format!(
                "__shfl_sync(0xffffffffu, {v}, {}, {width})",
                self.s.expr(T::I32, 1)
            ),
            1 => format!(
                "__shfl_up_sync(0xffffffffu, {v}, {}, {width})",
                self.s.below(33)
            ),
            2 => format!(
                "__shfl_down_sync(0xffffffffu, {v}, {}, {width})",
                self.s.below(33)
            ),
            _ => format!(
                "__shfl_xor_sync(0xffffffffu, {v}, {}, {width})",
                self.s.below(32)
            ),
        }
    }

    /// Statements where the whole block is converged: shared memory between barriers, shuffles,
    /// votes and matches, and the same collectives in both branches of an `if` that divides
    /// the warp (each lane gives what its own branch computed).
    fn converged(&mut self) {
        if self.families && self.s.below(2) == 0 {
            return self.family();
        }
        if self.s.below(3) == 0 {
            return self.split_collective();
        }
        match self.s.below(3) {
            0 => {
                let t = [T::U32, T::F32, T::I64, T::F64][self.s.below(4)];
                let v = self.s.expr(t, 2);
                let c = 1 + self.s.below(64);
                self.line(1, &format!("sh_{}[threadIdx.x] = {v};", t.prefix()));
                self.line(1, "__syncthreads();");
                self.define(
                    1,
                    t,
                    format!("sh_{}[(threadIdx.x + {c}) % blockDim.x]", t.prefix()),
                );
                self.line(1, "__syncthreads();");
            }
            1 => {
                let t = [T::I32, T::U32, T::F32, T::I64, T::F64][self.s.below(5)];
                let (kind, width) = (self.s.below(4), [32, 16, 8, 4][self.s.below(4)]);
                let call = self.collective(t, kind, width);
                self.define(1, t, call);
            }
            // `__activemask()` is left out: after a branch, the GPU need not have reconverged.
            _ => {
                let c = self.s.cond(2);
                let vote = self.s.pick(&["__ballot_sync", "__any_sync", "__all_sync"]);
                let t = if vote == "__ballot_sync" {
                    T::U32
                } else {
                    T::I32
                };
                self.define(1, t, format!("{vote}(0xffffffffu, {c})"));
            }
        }
    }
}

impl Gen<'_> {
    /// `if (c) x = C(a); else x = C(b);` for a warp collective `C` of one kind in both
    /// branches: a shuffle, a vote or a match (`x` is new, declared before the `if`).
    fn split_collective(&mut self) {
        let c = self.s.cond(2);
        let choice = self.s.below(3);
        let (t, calls) = match choice {
            0 => {
                let t = [T::I32, T::U32, T::F32, T::I64, T::F64][self.s.below(5)];
                let (kind, width) = (self.s.below(4), [32, 16, 8, 4][self.s.below(4)]);
                (t, [0, 1].map(|_| self.collective(t, kind, width)))
            }
            1 => {
                let vote = self.s.pick(&["__ballot_sync", "__any_sync", "__all_sync"]);
                let t = if vote == "__ballot_sync" {
                    T::U32
                } else {
                    T::I32
                };
                (
                    t,
                    [0, 1].map(|_| format!("{vote}(0xffffffffu, {})", self.s.cond(1))),
                )
            }
            _ => {
                let t = [T::I32, T::U32, T::I64, T::U64][self.s.below(4)];
                (
                    T::U32,
                    [0, 1].map(|_| format!("__match_any_sync(0xffffffffu, {})", self.s.expr(t, 1))),
                )
            }
        };
        let name = format!("{}{}", t.prefix(), self.fresh);
        self.fresh += 1;
        self.line(1, &format!("{} {name};", t.c()));
        self.line(1, &format!("if ({c}) {{"));
        self.line(2, &format!("{name} = {};", calls[0]));
        self.line(1, "} else {");
        self.line(2, &format!("{name} = {};", calls[1]));
        self.line(1, "}");
        self.s.vars.push((t, name));
    }
}

/// Copies through the thread's own word of shared memory, volatile, which neither NVVM nor
/// ptxas can see through (a volatile local can: NVVM keeps it in a register). NVRTC 13.0's ptxas
/// miscompiles four patterns (`bench/ptxas_fold.cu` reproduces them); the generator passes the
/// values that would form them through these, so it never asks them: the operand of every
/// integer-to-float conversion, the bits of a half, the high half of a 32-bit product, and a
/// double's high word on its way back into `__hiloint2double`.
const OPAQUE: &str = "__shared__ unsigned sh_o32[128];\n\
__shared__ unsigned long long sh_o64[128];\n\
__device__ unsigned opaque32(unsigned x) { volatile unsigned* p = &sh_o32[threadIdx.x]; *p = x; return *p; }\n\
__device__ unsigned long long opaque64(unsigned long long x) { volatile unsigned long long* p = &sh_o64[threadIdx.x]; *p = x; return *p; }\n";

/// The shared atomic of each slot: the operation, the type, the array and the slot. Each word
/// gets one operation only: different ones (`atomicAnd` and `atomicAdd`, `atomicMin` and
/// `atomicMax`) on one word with no barrier between them make the result depend on the order.
const ATOMIC_SLOTS: [(&str, T, &str, usize); 8] = [
    ("atomicAdd", T::U32, "acc", 0),
    ("atomicOr", T::U32, "acc", 1),
    ("atomicXor", T::U32, "acc", 2),
    ("atomicAnd", T::U32, "acc", 3),
    ("atomicMax", T::I32, "acci", 0),
    ("atomicMax", T::I32, "acci", 1),
    ("atomicMin", T::I32, "acci", 2),
    ("atomicMin", T::I32, "acci", 3),
];

/// The kernel of `seed`.
pub fn kernel(seed: u64) -> Kernel {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);
    let threads = 32 * (1 + (rng.next_u64() % 4) as u32);
    let blocks = 1 + (rng.next_u64() % 3) as u32;
    let mut g = Gen {
        s: Scope {
            rng: &mut rng,
            vars: vec![],
        },
        body: String::new(),
        fresh: 0,
        atomics: false,
        families: false,
        used: Used::default(),
        cp_in_flight: false,
    };
    g.atomics = g.s.below(2) == 0;
    g.families = g.s.below(2) == 0;
    let start = [
        (T::F32, "__uint_as_float(in[4 * gid])"),
        (T::F32, "__uint_as_float(in[4 * gid + 1])"),
        (T::I32, "(int)in[4 * gid + 2]"),
        (T::U32, "in[4 * gid + 3]"),
        (T::U32, "gid"),
        (
            T::I64,
            "(long long)(((unsigned long long)(int)in[4 * gid + 2] << 20) ^ in[4 * gid + 3])",
        ),
        (
            T::U64,
            "((unsigned long long)in[4 * gid + 3] << 32) | in[4 * gid]",
        ),
        (
            T::F64,
            "(double)__uint_as_float(in[4 * gid]) * __uint_as_float(in[4 * gid + 1])",
        ),
    ];
    for (t, v) in start {
        g.define(1, t, v.to_string());
    }
    for _ in 0..4 + g.s.below(8) {
        match g.s.below(5) {
            0 => g.converged(),
            1 => g.divergent(1, 2),
            _ => {
                let t = g.some_type();
                let v = g.s.expr(t, 3);
                g.define(1, t, v);
            }
        }
    }
    let mut slots = 0;
    let mut stores = String::new();
    for (t, name) in &g.s.vars {
        let words: Vec<String> = match t {
            T::F32 => vec![format!("__float_as_uint({name})")],
            T::F64 => vec![
                format!("(unsigned)__double2loint({name})"),
                format!("(unsigned)__double2hiint({name})"),
            ],
            t if t.wide() => vec![
                format!("(unsigned)({name})"),
                format!("(unsigned)(({name}) >> 32)"),
            ],
            _ => vec![format!("(unsigned)({name})")],
        };
        for w in words {
            stores += &format!("    out[gid * SLOTS + {slots}] = {w};\n");
            slots += 1;
        }
    }
    if g.atomics {
        stores += "    __syncthreads();\n";
        for k in 0..4 {
            stores += &format!("    out[gid * SLOTS + {}] = acc[{k}];\n", slots + k);
            stores += &format!(
                "    out[gid * SLOTS + {}] = (unsigned)acci[{k}];\n",
                slots + 4 + k
            );
        }
        slots += 8;
    }
    let atomics = if g.atomics {
        "    if (threadIdx.x < 4) { acc[threadIdx.x] = 0x9e3779b9u * threadIdx.x; acci[threadIdx.x] = (int)(threadIdx.x * 77u) - 100; }\n    __syncthreads();\n"
    } else {
        ""
    };
    // The families need compute capability 8.0; the runner compiles a source that names one of
    // the tensor-core instructions (this comment does) for compute_80.
    let mma_h = match (g.used.wmma, g.families) {
        (true, _) => "#include <mma.h>\n",
        (false, true) => {
            "// Families of compute capability 8.0 (cp.async, ldmatrix, mma.sync, wmma).\n"
        }
        _ => "",
    };
    let helpers = g.used.helpers();
    let shared = g.used.declarations();
    let code = format!(
        "// Generated by `runner fuzz --seed {seed}`: a well-defined kernel run on both backends.\n\
         #include <cuda_fp16.h>\n\
         {mma_h}{OPAQUE}{helpers}#define SLOTS {slots}\n\
         extern \"C\" __global__ void fuzz(const unsigned* in, unsigned* out, int n)\n{{\n\
         \x20   __shared__ unsigned sh_u[128];\n\
         \x20   __shared__ float sh_f[128];\n\
         \x20   __shared__ long long sh_l[128];\n\
         \x20   __shared__ double sh_d[128];\n\
         \x20   __shared__ unsigned acc[4];\n\
         \x20   __shared__ int acci[4];\n\
         {shared}\x20   unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;\n\
         {atomics}{}{stores}}}\n",
        g.body
    );
    Kernel {
        code,
        blocks,
        threads,
        slots,
    }
}
