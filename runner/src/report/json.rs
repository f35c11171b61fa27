//! `check --json`: the [`Outcome`] as one JSON object for scripts and graders (the contract the
//! book's introduction states under "`--json`, for graders", key by key in its Contracts appendix), through a view of its own so the engine's types can change without changing it.
//!
//! Keys come in a fixed order (the fields' order below; `params` sorted by name), so two runs of
//! the same check print the same text. The output is one line unless `--pretty`. A passing case
//! leaves out its `output` and `expected` arrays unless `--full`; a failing case keeps them and
//! adds `inputs`, the input arrays by parameter name, so it can be reproduced (`params` has the
//! sizes and macros). A full-scale case's inputs are left out (millions of values): its name and
//! the puzzle rebuild it exactly; so are its `output` and `expected` unless `--full` (a failing
//! 8192 x 8192 case made gigabytes of JSON, minutes to print and to read). `root` is the workbook's folder, absolute.

use crate::judge::outcome::Agreement;
use crate::judge::outcome::{Backend, CaseResult, NotRun, Outcome};
use serde::Serialize;
use spec::{Arg, Case, Diagnostic, Puzzle, Scale};
use std::collections::BTreeMap;
use toolchain::warnings::Warning;

/// How much to print.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// Indented, one key per line.
    pub pretty: bool,
    /// Every case's output and expected arrays, passing or not.
    pub full: bool,
}

#[derive(Serialize)]
struct View<'a> {
    puzzle: &'a str,
    file: &'a str,
    root: String,
    passed: bool,
    backends: &'a [Backend],
    cases: Vec<CaseView<'a>>,
    diagnostics: &'a [Diagnostic],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    warnings: &'a [Warning],
    #[serde(skip_serializing_if = "Option::is_none")]
    backend_agreement: Option<&'a Agreement>,
}

#[derive(Serialize)]
struct CaseView<'a> {
    name: &'a str,
    backend: Backend,
    passed: bool,
    max_abs_err: Option<f64>,
    params: BTreeMap<&'a str, i32>,
    seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<spec::job::AccessStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a [f32]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<&'a [f64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inputs: Option<BTreeMap<String, Vec<f32>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shrunk_from: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    printed: &'a [spec::job::Printed],
    #[serde(skip_serializing_if = "spec::job::is_zero")]
    printed_more: u64,
    /// Why the case never ran (an earlier case timed out): a failed case all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_run: Option<&'a str>,
}

/// The JSON text of `outcome`, checked against `puzzle` (whose cases give a failing case's inputs).
pub fn render(outcome: &Outcome, puzzle: &Puzzle, style: Style) -> String {
    let small = puzzle.graded_cases(Scale::Small);
    let cases = outcome
        .cases
        .iter()
        .map(|c| {
            // A failing full-scale case (millions of values, megabytes of text) keeps its
            // arrays only with --full, as a passing one.
            let original = c.shrunk_from.as_deref().unwrap_or(&c.name);
            let is_small = small.iter().any(|s| s.name == original);
            let arrays = style.full || (!c.passed && is_small);
            CaseView {
                name: &c.name,
                backend: c.backend,
                passed: c.passed,
                max_abs_err: c.max_abs_err,
                params: c.params.iter().map(|(k, v)| (k.as_str(), *v)).collect(),
                seconds: c.seconds,
                instructions: c.instructions,
                stats: c.stats,
                output: arrays.then_some(c.output.as_slice()),
                expected: arrays.then_some(c.expected.as_slice()),
                inputs: (!c.passed).then(|| inputs(puzzle, &small, c)).flatten(),
                shrunk_from: c.shrunk_from.as_deref(),
                printed: &c.printed,
                printed_more: c.printed_more,
                not_run: c.not_run.as_ref().map(NotRun::why),
            }
        })
        .collect();
    let root = crate::workbook::root();
    let view = View {
        puzzle: &outcome.puzzle,
        file: &outcome.file,
        root: std::fs::canonicalize(&root)
            .unwrap_or(root)
            .display()
            .to_string(),
        passed: outcome.passed,
        backends: &outcome.backends,
        cases,
        diagnostics: &outcome.diagnostics,
        warnings: &outcome.warnings,
        backend_agreement: outcome.backend_agreement.as_ref(),
    };
    let text = if style.pretty {
        serde_json::to_string_pretty(&view)
    } else {
        serde_json::to_string(&view)
    };
    text.expect("an outcome serializes")
}

/// The input arrays of the small case `result` ran (a shrunk case is cut again from its
/// original, the same way), by parameter name; `None` for a full-scale case.
fn inputs(
    puzzle: &Puzzle,
    small: &[Case],
    result: &CaseResult,
) -> Option<BTreeMap<String, Vec<f32>>> {
    let original = result.shrunk_from.as_deref().unwrap_or(&result.name);
    let case = small.iter().find(|c| c.name == original)?;
    let case = match &result.shrunk_from {
        None => case.clone(),
        Some(_) => (puzzle.shrink?)(case)
            .into_iter()
            .find(|c| c.name == result.name)?,
    };
    Some(
        case.job
            .args
            .into_iter()
            .filter_map(|a| match a {
                Arg::Input { name, data } => Some((name, data)),
                _ => None,
            })
            .collect(),
    )
}
