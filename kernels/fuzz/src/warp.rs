//! Two more families of `families`: `wmma` (fragments loaded from shared memory, one
//! `mma_sync`, stored back and read after a barrier) and mixes of warp collectives as learners
//! chain them (a reduction, `__match_all_sync`, a ballot choosing a shuffle's source lane, a
//! lane's rank among the lanes whose condition holds, a butterfly of `__shfl_xor_sync`).
//!
//! A fragment's element-to-thread mapping is unspecified, so nothing here depends on it: the
//! fragments come from memory through `load_matrix_sync` (or are changed element by element
//! alike, as `__float_to_tf32` is), and their contents reach the thread's variables only through
//! `store_matrix_sync` and shared memory.

use crate::expr::T;
use crate::source::Gen;

const FULL: &str = "0xffffffffu";

impl Gen<'_> {
    /// Each warp multiplies A (16 x K) by B (K x 16), both filled by the whole block, onto its
    /// own C, loaded from shared memory: half m16n16k16 or tf32 m16n16k8, the layouts random.
    pub(super) fn wmma(&mut self) {
        self.used.wmma = true;
        let tf32 = self.s.below(2) == 0;
        let (k, elem, from) = if tf32 {
            (8, "nvcuda::wmma::precision::tf32", "sh_t")
        } else {
            (16, "__half", "sh_h")
        };
        let (x, y, z) = (
            self.s.expr(T::F32, 1),
            self.s.expr(T::F32, 1),
            self.s.expr(T::F32, 1),
        );
        let (p, q) = (2 + self.s.below(9), 2 + self.s.below(7));
        let conv = if tf32 { "" } else { "__float2half_rn" };
        self.line(
            1,
            &format!("for (int e = threadIdx.x; e < 16 * {k}; e += blockDim.x) {{"),
        );
        self.line(
            2,
            &format!("{from}[0][e] = {conv}(fz({x}) + 0.25f * (float)(e % {p}));"),
        );
        self.line(
            2,
            &format!("{from}[1][e] = {conv}(fz({y}) - 0.125f * (float)(e % {q}));"),
        );
        self.line(1, "}");
        self.line(
            1,
            &format!("for (int e = threadIdx.x % 32; e < 256; e += 32) sh_w[threadIdx.x / 32][e] = fz({z}) * (float)(e % 3);"),
        );
        self.line(1, "__syncthreads();");
        let major =
            |g: &mut Self| ["nvcuda::wmma::row_major", "nvcuda::wmma::col_major"][g.s.below(2)];
        let (la, lb) = (major(self), major(self));
        let mem = |g: &mut Self| {
            ["nvcuda::wmma::mem_row_major", "nvcuda::wmma::mem_col_major"][g.s.below(2)]
        };
        let (lc, ld) = (mem(self), mem(self));
        let lda =
            |l: &str, rows: usize, cols: usize| if l.ends_with("row_major") { cols } else { rows };
        let (fa, fb, fc) = (
            self.fresh_name('a'),
            self.fresh_name('b'),
            self.fresh_name('c'),
        );
        self.line(1, "{");
        self.line(
            2,
            &format!(
                "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, {k}, {elem}, {la}> {fa};"
            ),
        );
        self.line(
            2,
            &format!(
                "nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, {k}, {elem}, {lb}> {fb};"
            ),
        );
        self.line(
            2,
            &format!("nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, {k}, float> {fc};"),
        );
        self.line(
            2,
            &format!(
                "nvcuda::wmma::load_matrix_sync({fa}, {from}[0], {});",
                lda(la, 16, k)
            ),
        );
        self.line(
            2,
            &format!(
                "nvcuda::wmma::load_matrix_sync({fb}, {from}[1], {});",
                lda(lb, k, 16)
            ),
        );
        if tf32 {
            for f in [&fa, &fb] {
                self.line(2, &format!("for (int e = 0; e < {f}.num_elements; e++) {f}.x[e] = nvcuda::wmma::__float_to_tf32({f}.x[e]);"));
            }
        }
        self.line(
            2,
            &format!("nvcuda::wmma::load_matrix_sync({fc}, sh_w[threadIdx.x / 32], 16, {lc});"),
        );
        self.line(
            2,
            &format!("nvcuda::wmma::mma_sync({fc}, {fa}, {fb}, {fc});"),
        );
        self.line(2, "__syncwarp();");
        self.line(
            2,
            &format!("nvcuda::wmma::store_matrix_sync(sh_w[threadIdx.x / 32], {fc}, 16, {ld});"),
        );
        self.line(1, "}");
        self.line(1, "__syncthreads();");
        for _ in 0..1 + self.s.below(3) {
            let (m, c) = (2 * self.s.below(64) + 1, self.s.below(256));
            self.define(
                1,
                T::F32,
                format!("sh_w[threadIdx.x / 32][((threadIdx.x % 32) * {m}u + {c}u) % 256u]"),
            );
        }
        self.line(1, "__syncthreads();");
    }

    /// A chain of warp collectives over the full mask.
    pub(super) fn collective_mix(&mut self) {
        match self.s.below(5) {
            0 => {
                let op = self.s.pick(&["add", "min", "max", "and", "or", "xor"]);
                let t = if ["add", "min", "max"].contains(&op) && self.s.below(2) == 0 {
                    T::I32
                } else {
                    T::U32
                };
                let v = self.s.expr(t, 2);
                self.define(1, t, format!("__reduce_{op}_sync({FULL}, {v})"));
            }
            1 => {
                let t = [T::I32, T::U32, T::I64, T::U64][self.s.below(4)];
                // Few distinct values, so that "all equal" happens too.
                let v = format!("(({}) & 3)", self.s.expr(t, 1));
                let p = self.fresh_name('i');
                self.line(1, &format!("int {p};"));
                self.define(1, T::U32, format!("__match_all_sync({FULL}, {v}, &{p})"));
                self.s.vars.push((T::I32, p));
            }
            2 => {
                let t = [T::I32, T::U32, T::F32, T::I64, T::F64][self.s.below(5)];
                let (v, c) = (self.s.expr(t, 2), self.s.cond(1));
                self.define(
                    1,
                    t,
                    format!(
                        "__shfl_sync({FULL}, {v}, (__ffs(__ballot_sync({FULL}, {c})) + 31) & 31)"
                    ),
                );
            }
            3 => {
                let c = self.s.cond(2);
                self.define(
                    1,
                    T::U32,
                    format!(
                        "__popc(__ballot_sync({FULL}, {c}) & ((1u << (threadIdx.x % 32)) - 1u))"
                    ),
                );
            }
            _ => {
                // Not f64: which of two NaNs an f64 add keeps is ptxas's choice (bench/RESULTS.md).
                let t = [T::U32, T::F32][self.s.below(2)];
                let v = self.s.expr(t, 2);
                let name = self.fresh_name(t.prefix());
                self.line(1, &format!("{} {name} = {v};", t.c()));
                let op = if t == T::U32 {
                    self.s.pick(&["+", "^", "|"])
                } else {
                    "+"
                };
                self.line(
                    1,
                    &format!("for (int o = 16; o > 0; o >>= 1) {name} = {name} {op} __shfl_xor_sync({FULL}, {name}, o);"),
                );
                self.s.vars.push((t, name));
            }
        }
    }
}
