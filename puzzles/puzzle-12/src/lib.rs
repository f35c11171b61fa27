//! Puzzle 12: convolution as matrix products, on tensor cores (valid contract).
//!
//! Puzzle 08's problem again, with everything puzzle 08 fixed left as it was: the signature, the
//! `launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES}` declaration
//! ([`spec::LaunchRule::Linear`]), the cases (puzzle 04's, with puzzle 08's seed) and the
//! tolerance. Only the title, the hints, the chapter and the budget are new: the spec is puzzle
//! 08's with those fields replaced, so the two cannot drift apart. The budget
//! ([`spec::TENSOR_CORE_BUDGET`]) holds the lesson: a kernel that does its products on the CUDA
//! cores, as puzzle 08 does (in any precision), gets `budget_exceeded`.
//!
//! What changes is the arithmetic the learner is expected to use: the output cut into rows, each
//! block of outputs a product of a Toeplitz matrix of the taps with shifted input rows, on
//! `mma.sync` m16n8k8 tf32, every float split into a tf32 high part and a tf32 remainder so that
//! three products keep puzzle 08's tolerance (`runner/tests/it/broken12.rs`: plain tf32 does not).

use spec::TENSOR_CORE_BUDGET;
use spec::{Case, Puzzle};

pub fn spec() -> Puzzle {
    Puzzle {
        id: "puzzle-12",
        title: "Convolution as matrix products",
        grade: 5,
        teaches: "Toeplitz blocks times shifted input tiles on mma.sync tf32; each float split into a tf32 high part and remainder",
        hints: &[
            "Cut the output into rows of B outputs (row r starts at output B r): output b of row r is the sum over k of x[B r + k] * w[k - b]. That is a matrix product W X with W[b][k] = w[k - b] (zero outside the kernel) and X[k][r] = x[B r + k].",
            "Give W to mma.sync as A (16 x 8: b by k) and X as B (8 x 8: k by r). The order of the 8 k of a k-step is yours, if A and B agree: let lane t take k = 2t and 2t + 1. Its A operands are then a pair of neighbouring taps, from w[8 s + 2t - 16 mu - g], and the same pair 8 taps earlier for rows g + 8: one sliding window of pairs serves every tile.",
            "Plain tf32 keeps 11 bits of each float: 2047 such products miss puzzle 08's tolerance. Split x = hi + lo with hi = cvt.rna.tf32(x), lo = cvt.rna.tf32(x - hi), and add hi*hi + hi*lo + lo*hi (lo*lo is below 2^-22 of the product).",
            "Split once, when staging into shared memory: store {hi(x[p]), hi(x[p + 1]), lo(x[p]), lo(x[p + 1])} as one float4, and a B fragment is one 16-byte load. Pad each row of B inputs by 4 slots so that the 8 rows one load reads fall in different banks.",
        ],
        budget: Some(TENSOR_CORE_BUDGET),
        cases: |scale| budgeted((puzzle_08::spec().cases)(scale)),
        fresh: Some(|seed, scale| {
            budgeted(puzzle_08::spec().fresh.map_or(vec![], |f| f(seed, scale)))
        }),
        ..puzzle_08::spec()
    }
}

/// `cases` with the tensor-core budget: K = kernel_size multiply-adds per output.
fn budgeted(mut cases: Vec<Case>) -> Vec<Case> {
    for c in &mut cases {
        let k = c.job.scalar("kernel_size").unwrap_or(1).max(1) as u64;
        c.job.tensor_core_budget(k);
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::Scale;

    #[test]
    fn everything_but_the_words_is_puzzle_08s() {
        let (p12, p08) = (spec(), puzzle_08::spec());
        assert_eq!(p12.kernel, p08.kernel);
        assert_eq!(p12.params, p08.params);
        assert_eq!(p12.declared_launch, p08.declared_launch);
        assert_eq!(
            (p12.tolerance.atol, p12.tolerance.rtol),
            (p08.tolerance.atol, p08.tolerance.rtol)
        );
        let (a, b) = ((p12.cases)(Scale::Small), (p08.cases)(Scale::Small));
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.name, y.name);
            assert_eq!(x.expected, y.expected, "{}", x.name);
            assert_eq!(x.job.args, y.job.args, "{}", x.name);
        }
    }
}
