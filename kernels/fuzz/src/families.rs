//! The generator's families for what learners write on tensor-core puzzles: `cp.async` with
//! commit and wait groups, `ldmatrix`, `mma.sync`, `wmma` load/store/mma, and mixes of warp
//! collectives (`__reduce_*_sync`, `__match_all_sync`, a ballot feeding a shuffle or a rank).
//!
//! Each is a block statement where the whole block is converged, and each asks only what the
//! PTX ISA defines: a `cp.async` group is read only once a `wait_group` has retired it and a
//! barrier has made every thread's copies visible; `ldmatrix` rows are 16-byte aligned rows of
//! shared memory written before a barrier; the tensor cores get finite values between 1e-3 and
//! 1e4 in magnitude (or zero; `fz`), so no NaN payload, infinity or subnormal asks how a tensor
//! core treats them; shared memory a family reads is rewritten only after a later barrier; and
//! a `cp.async` block that starts while an earlier block's groups are in flight waits for them
//! first (two copies of one thread into the same bytes, neither waited for, are unordered).
//! Their shared arrays are declared only in the kernels that use them ([`crate::used::Used::declarations`]).

use crate::expr::T;
use crate::source::Gen;

impl Gen<'_> {
    /// One statement of a family, picked at random.
    pub(super) fn family(&mut self) {
        match self.s.below(5) {
            0 => self.cp_async(),
            1 => self.ldmatrix(),
            2 => self.mma_sync(),
            3 => self.wmma(),
            _ => self.collective_mix(),
        }
    }

    /// 1 to 3 groups of `cp.async` copies (4, 8 or 16 bytes a thread from a word of `in` picked
    /// per group), a `wait_group W` (or `wait_all`), a barrier, then reads of the retired groups
    /// only (the newest W may still be in flight), each from a neighbour thread's copy. Groups an
    /// earlier block left in flight write the same rows `sh_c[g]`, so they are retired first
    /// (`cp.async.wait_all`, added without drawing a random number, so every other kernel stays
    /// as it was): seed 2,023,485 raced its two blocks' copies into `sh_c[1]`.
    fn cp_async(&mut self) {
        self.used.cp_async = true;
        let groups = 1 + self.s.below(3);
        let wait = self.s.below(groups);
        let mut layout = vec![];
        if self.cp_in_flight {
            self.line(1, "asm volatile(\"cp.async.wait_all;\" ::: \"memory\");");
        }
        self.line(1, "{");
        for g in 0..groups {
            let size = [4, 8, 16][self.s.below(3)];
            let off = (size / 4) * self.s.below(4 / (size / 4));
            let shift = self.s.below(1000);
            let cache = if size == 16 && self.s.below(2) == 0 {
                "cg"
            } else {
                "ca"
            };
            self.line(
                2,
                &format!("asm volatile(\"cp.async.{cache}.shared.global [%0], [%1], {size};\" :: \"r\"((unsigned)__cvta_generic_to_shared(&sh_c[{g}][4 * threadIdx.x + {off}])), \"l\"(&in[4 * ((gid + {shift}u) % (unsigned)n) + {off}]) : \"memory\");"),
            );
            self.line(
                2,
                "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");",
            );
            layout.push((off, size / 4));
        }
        self.cp_in_flight = wait > 0;
        if wait == 0 && self.s.below(2) == 0 {
            self.line(2, "asm volatile(\"cp.async.wait_all;\" ::: \"memory\");");
        } else {
            self.line(
                2,
                &format!("asm volatile(\"cp.async.wait_group {wait};\" ::: \"memory\");"),
            );
        }
        self.line(2, "__syncthreads();");
        let mut reads = vec![];
        for (g, &(off, words)) in layout.iter().enumerate().take(groups - wait) {
            let (c, w) = (self.s.below(128), self.s.below(words));
            reads.push(format!(
                "sh_c[{g}][4 * ((threadIdx.x + {c}u) % blockDim.x) + {}]",
                off + w
            ));
        }
        self.line(1, "}");
        // The reads are new variables of the function's scope, so they sit after the block.
        for r in reads {
            self.define(1, T::U32, r);
        }
        self.line(1, "__syncthreads();");
    }

    /// Each thread writes one 16-byte row of `sh_m`; after a barrier every warp loads 1, 2 or 4
    /// 8x8 matrices of b16 (transposed or not) whose rows are a permutation of the block's rows.
    fn ldmatrix(&mut self) {
        self.used.ldmatrix = true;
        for k in 0..4 {
            let v = self.s.expr(T::U32, 2);
            self.line(1, &format!("sh_m[4 * threadIdx.x + {k}] = {v};"));
        }
        self.line(1, "__syncthreads();");
        let n = [1, 2, 4][self.s.below(3)];
        let trans = if self.s.below(2) == 0 { ".trans" } else { "" };
        let (a, b) = (2 * self.s.below(16) + 1, self.s.below(128));
        let names: Vec<String> = (0..n).map(|_| self.fresh_name('u')).collect();
        self.line(1, &format!("unsigned {};", names.join(", ")));
        let regs: Vec<String> = (0..n).map(|i| format!("%{i}")).collect();
        let outs: Vec<String> = names.iter().map(|v| format!("\"=r\"({v})")).collect();
        self.line(
            1,
            &format!("asm volatile(\"ldmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 {{{}}}, [%{n}];\" : {} : \"r\"((unsigned)__cvta_generic_to_shared(&sh_m[4 * ((threadIdx.x * {a}u + {b}u) % blockDim.x)])) : \"memory\");", regs.join(", "), outs.join(", ")),
        );
        for v in names {
            self.s.vars.push((T::U32, v));
        }
        self.line(1, "__syncthreads();");
    }

    pub(super) fn fresh_name(&mut self, prefix: char) -> String {
        let name = format!("{prefix}{}", self.fresh);
        self.fresh += 1;
        name
    }

    /// One `mma.sync` of each warp: m16n8k8 tf32 or m16n8k16 f16 with f32 accumulators, the
    /// operands from the thread's variables through `fz`.
    fn mma_sync(&mut self) {
        self.used.mma = true;
        let tf32 = self.s.below(2) == 0;
        let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
        for k in 0..10 {
            let x = self.s.expr(T::F32, 1);
            let word = if tf32 {
                format!("__float_as_uint(fz({x}))")
            } else {
                format!("h2({x}, {})", self.s.expr(T::F32, 1))
            };
            if k < 4 {
                a.push(word)
            } else if k < 6 {
                b.push(word)
            } else {
                c.push(format!("fz({x})"))
            }
        }
        let d: Vec<String> = (0..4).map(|_| self.fresh_name('f')).collect();
        for (name, init) in d.iter().zip(&c) {
            self.line(1, &format!("float {name} = {init};"));
        }
        let shape = if tf32 {
            "m16n8k8.row.col.f32.tf32.tf32.f32"
        } else {
            "m16n8k16.row.col.f32.f16.f16.f32"
        };
        // `.aligned`: the warp must be converged, which divergent code before it does not
        // promise (the simulator reports the lanes that arrive apart).
        self.line(1, "__syncwarp();");
        let outs: Vec<String> = d.iter().map(|v| format!("\"+f\"({v})")).collect();
        let ins: Vec<String> = a.iter().chain(&b).map(|v| format!("\"r\"({v})")).collect();
        self.line(
            1,
            &format!("asm volatile(\"mma.sync.aligned.{shape} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\" : {} : {});", outs.join(", "), ins.join(", ")),
        );
        for v in d {
            self.s.vars.push((T::F32, v));
        }
    }
}
