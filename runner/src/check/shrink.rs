//! Cutting a wrong case down to the smallest size that still fails, so that the learner reads
//! one small failure (each puzzle's `shrink` gives the smaller cases to try).

use crate::judge::judge;
use crate::judge::outcome::{Backend, CaseResult, Verdict};
use spec::{Case, Diagnostic, Kind, Puzzle, RunOutput};

/// Whether a wrong case is cut smaller: only wrong values shrink usefully (an unwritten element is
/// as plain at any size), and the teaching cases are already as small as they are meant to be.
pub fn shrinkable(case: &Case, result: &CaseResult, diags: &[Diagnostic]) -> bool {
    let only_wrong = diags
        .iter()
        .all(|d| matches!(d.kind, Kind::WrongOutput | Kind::UnwrittenOutput))
        && diags.iter().any(|d| d.kind == Kind::WrongOutput)
        && !case.name.starts_with("example");
    !result.passed && only_wrong && !result.output.is_empty()
}

/// The smallest shrunk version of a failing case that still fails, if the puzzle can shrink.
pub fn shrink_failure(
    puzzle: &Puzzle,
    case: &Case,
    backend: Backend,
    run: &mut dyn FnMut(&Case) -> (RunOutput, Case),
) -> Option<Verdict> {
    let shrink = puzzle.shrink?;
    shrink(case)
        .iter()
        .map(|smaller| {
            let (out, ran) = run(smaller);
            let (result, diagnostics) = judge(puzzle, &ran, backend, out);
            Verdict {
                result,
                diagnostics,
            }
        })
        .find(|v| !v.result.passed)
}
