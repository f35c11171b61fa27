//! What a check found, as plain data: the backends, one result per case and backend, the
//! whole outcome with its agreement between the simulator and the GPU. `check` fills these,
//! `judge` and `grid` read and write single results, and the reports (`check`, `validate`,
//! `grade`, `--json`) print them. This module imports none of those: it sits below them all.

use serde::{Deserialize, Serialize};
use spec::{Case, Diagnostic, Kind};
use std::collections::HashMap;

/// Which backends a check may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The simulator for the small cases, and the GPU for every case where there is one.
    Auto,
    Gpu,
    Sim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sim,
    Gpu,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sim => "sim",
            Backend::Gpu => "gpu",
        }
    }
}

/// One case on one backend: everything the reports read. Plain data; its serialized views are
/// at the edges (`report::json::CaseView` for `--json`, `check::remote::Wire` for the GPU
/// worker's summary).
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub name: String,
    pub backend: Backend,
    pub passed: bool,
    /// Largest |yours - expected| over the elements (null when nothing came back or a value is NaN).
    pub max_abs_err: Option<f64>,
    pub params: HashMap<String, i32>,
    pub seconds: f64,
    pub instructions: Option<u64>,
    /// The most global reads and writes any one thread made (simulator only).
    pub stats: Option<spec::job::AccessStats>,
    pub output: Vec<f32>,
    pub expected: Vec<f64>,
    /// The first element outside the puzzle's tolerance (or still NaN), for the report's diff.
    pub first_mismatch: Option<usize>,
    /// Rows, columns and stride of a 2D output (whose report names rows and columns).
    pub pitch: Option<spec::job::Pitch>,
    /// Rows, columns and channels of each image of an NHWC output (puzzle 11), whose report
    /// names each element by (image, row, column, channel).
    pub nhwc: Option<[usize; 3]>,
    /// For a shrunk case: the case it was cut from.
    pub shrunk_from: Option<String>,
    /// What the kernel's `printf` calls printed (the simulator names the thread of each).
    pub printed: Vec<spec::job::Printed>,
    /// Entries printed past the ones kept.
    pub printed_more: u64,
    /// This case's own diagnostics (`kind: message`), before repeats across cases are folded
    /// into one (for per-case reports such as Gradescope's tests).
    pub findings: Vec<Finding>,
    /// Why the case never ran (a timeout in an earlier case ended the backend's run): it counts
    /// as a failed case, so a kernel that hangs on case 3 of 12 scores 2 of 12, not 2 of 3.
    pub not_run: Option<NotRun>,
    /// The diff of a wrong full-scale case, drawn by the GPU worker that judged it (its arrays
    /// stay there; see `remote`).
    pub diff: Option<String>,
    /// The run ended the backend's context (`RunOutput::context_lost`): on the GPU no further
    /// case runs after it (`sequence`).
    pub context_lost: bool,
}

impl CaseResult {
    /// Whether the kernel's `printf` printed anything in this case.
    pub fn printed_anything(&self) -> bool {
        !self.printed.is_empty() || self.printed_more > 0
    }

    /// A case that never ran on `backend`, failed with `why`.
    pub fn not_run(case: &Case, backend: Backend, why: NotRun) -> CaseResult {
        CaseResult {
            name: case.name.clone(),
            backend,
            passed: false,
            max_abs_err: None,
            params: case.params().into_iter().collect(),
            seconds: 0.0,
            instructions: None,
            stats: None,
            output: vec![],
            expected: vec![],
            first_mismatch: None,
            pitch: None,
            nhwc: None,
            shrunk_from: None,
            printed: vec![],
            printed_more: 0,
            findings: vec![Finding::NotRun(why.clone())],
            not_run: Some(why),
            context_lost: false,
            diff: None,
        }
    }
}

/// Why a case never ran; it counts as failed all the same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NotRun {
    /// An earlier case ended the backend's run (a timeout, a trap, a lost context): says which.
    After(String),
    /// A GPU full case left for `grade`'s second pass (`check::later`).
    Waiting,
}

impl NotRun {
    /// Why, as the reports say it.
    pub fn why(&self) -> &str {
        match self {
            NotRun::After(why) => why,
            NotRun::Waiting => WAITING,
        }
    }
}

/// One of a case's own findings, before repeats across cases are folded (Gradescope's per-case
/// tests list them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    NotRun(NotRun),
    /// A diagnostic of this case: its kind and message.
    Diagnostic(Kind, String),
}

impl Finding {
    pub fn of(d: &Diagnostic) -> Finding {
        Finding::Diagnostic(d.kind, d.message.clone())
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::NotRun(n) => write!(f, "not run: {}", n.why()),
            Finding::Diagnostic(kind, message) => write!(f, "{}: {message}", kind.name()),
        }
    }
}

/// One case judged: its result and the diagnostics it earned.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub result: CaseResult,
    pub diagnostics: Vec<Diagnostic>,
}

/// A judged case, and, when it was cut smaller, the smallest size that still failed.
#[derive(Clone, Debug)]
pub struct Judged {
    pub case: Verdict,
    pub shrunk: Option<Verdict>,
}

impl Judged {
    /// A judged case that was not cut smaller.
    pub fn alone(result: CaseResult, diagnostics: Vec<Diagnostic>) -> Judged {
        Judged {
            case: Verdict {
                result,
                diagnostics,
            },
            shrunk: None,
        }
    }
}

/// Everything one check found.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub puzzle: String,
    pub file: String,
    pub passed: bool,
    pub backends: Vec<Backend>,
    pub cases: Vec<CaseResult>,
    pub diagnostics: Vec<Diagnostic>,
    /// NVRTC's warnings about the kernel (it compiled; they do not fail it).
    pub warnings: Vec<toolchain::warnings::Warning>,
    /// Where both backends ran a case: do their outputs agree bit for bit?
    pub backend_agreement: Option<Agreement>,
    /// The full-scale case's time from this check's one launch on the GPU, when it passed there.
    pub full_case: Option<QuickTiming>,
    /// Lines for people: what ran where, what was skipped and why.
    pub notes: Vec<String>,
    /// The GPU's full-scale cases, left for later (`grade`'s second pass, `later`).
    pub later: Option<Later>,
}

/// One timed launch of the full-scale case during a check: a glance, not a benchmark (`runner
/// bench` warms up, repeats and takes the median).
#[derive(Clone, Debug, Serialize)]
pub struct QuickTiming {
    pub case: String,
    pub device: String,
    pub seconds: f64,
    /// Share of the FP32 FMA peak `runner bench` measured on this device, if it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fma_peak_share: Option<f64>,
}

/// How the simulator's outputs compare with the GPU's on the cases both ran.
#[derive(Clone, Debug, Serialize)]
pub struct Agreement {
    pub cases: usize,
    /// Cases whose outputs are identical bit for bit.
    pub identical: usize,
    /// Largest difference in units in the last place over all elements.
    pub max_ulp: u32,
}

/// The first `n` of `names`, then how many more: `a, b, c and 4 more`.
pub fn fold(names: &[String], n: usize) -> String {
    if names.len() <= n {
        names.join(", ")
    } else {
        format!("{} and {} more", names[..n].join(", "), names.len() - n)
    }
}

/// Keeps the first diagnostics of each kind (one per source line, at most `KEEP`), and says how
/// many more of that kind there were.
pub fn dedup(diagnostics: &mut Vec<Diagnostic>) {
    const KEEP: usize = 2;
    let mut kept: Vec<Diagnostic> = vec![];
    // Per kind: the other cases where it was seen again.
    let mut again: Vec<(Kind, Vec<String>)> = vec![];
    for d in diagnostics.drain(..) {
        let same_kind = kept.iter().filter(|k| k.kind == d.kind).count();
        let same_place = kept.iter().any(|k| {
            k.kind == d.kind && ((k.line.is_some() && k.line == d.line) || k.message == d.message)
        });
        if same_kind < KEEP && !same_place {
            kept.push(d);
            continue;
        }
        let case = d.case.unwrap_or_default();
        match again.iter_mut().find(|(k, _)| *k == d.kind) {
            Some((_, cases)) if !cases.contains(&case) => cases.push(case),
            Some(_) => {}
            None => again.push((d.kind, vec![case])),
        }
    }
    for (kind, mut cases) in again {
        let last = kept
            .iter_mut()
            .rev()
            .find(|k| k.kind == kind)
            .expect("a kept one of each repeated kind");
        // Its own case is where it is reported, not another one it was seen in.
        cases.retain(|c| Some(c) != last.case.as_ref());
        if !cases.is_empty() {
            last.message += &format!(" [also in case {}]", fold(&cases, 3));
        }
    }
    *diagnostics = kept;
}

/// What a full case left for later says in the meantime (never in a finished outcome).
const WAITING: &str = "left for the second pass, after every submission's small cases";

/// The GPU's full cases of one check, left for `grade`'s second pass (`later::finish`).
#[derive(Clone, Debug)]
pub struct Later {
    pub device: gpu::Device,
    pub cases: Vec<Case>,
    pub code: String,
    /// Whether a small case failed on the GPU: then no full case is cut smaller.
    pub failed_before: bool,
}

impl Later {
    /// The full cases among `cases` that the GPU's run left waiting (`results`), if any.
    pub fn of(
        device: &gpu::Device,
        cases: &[Case],
        results: &[CaseResult],
        code: &str,
    ) -> Option<Later> {
        let waits = |c: &&Case| results.iter().any(|r| r.name == c.name && is_waiting(r));
        let cases: Vec<Case> = cases.iter().filter(waits).cloned().collect();
        (!cases.is_empty()).then(|| Later {
            device: device.clone(),
            cases,
            code: code.to_string(),
            failed_before: results.iter().any(|r| !r.passed && !is_waiting(r)),
        })
    }
}

#[cfg(test)]
impl Outcome {
    /// A test's outcome of one file whose cases all ran on the GPU; passed when every case
    /// passed and nothing was diagnosed.
    pub fn of_gpu(puzzle: &str, cases: Vec<CaseResult>, diagnostics: Vec<Diagnostic>) -> Outcome {
        Outcome {
            puzzle: puzzle.into(),
            file: "k.cu".into(),
            passed: cases.iter().all(|c| c.passed) && diagnostics.is_empty(),
            backends: vec![Backend::Gpu],
            cases,
            diagnostics,
            warnings: vec![],
            backend_agreement: None,
            full_case: None,
            notes: vec![],
            later: None,
        }
    }
}

/// A full case's stand-in result while it waits for the second pass.
pub fn waiting(case: &Case) -> CaseResult {
    CaseResult::not_run(case, Backend::Gpu, NotRun::Waiting)
}

/// Whether `r` is a full case's stand-in ([`waiting`]).
pub fn is_waiting(r: &CaseResult) -> bool {
    r.backend == Backend::Gpu && r.not_run == Some(NotRun::Waiting)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(case: &Case, passed: bool) -> CaseResult {
        CaseResult {
            passed,
            not_run: None,
            ..CaseResult::not_run(case, Backend::Gpu, NotRun::After(String::new()))
        }
    }

    #[test]
    fn only_the_full_cases_left_waiting_are_kept_for_later() {
        let puzzle = crate::workbook::registry::find("puzzle-04").expect("puzzle 04");
        let small = (puzzle.cases)(spec::Scale::Small);
        let device = gpu::Device {
            name: "test".into(),
            major: 9,
            minor: 0,
            multiprocessors: 132,
        };
        let (a, b) = (&small[0], &small[1]);
        let mut results = vec![result(a, true), waiting(b)];
        let later = Later::of(&device, &small, &results, "code").expect("b waits");
        assert_eq!(later.cases.len(), 1);
        assert_eq!(later.cases[0].name, b.name);
        assert!(!later.failed_before);
        results[0].passed = false;
        assert!(
            Later::of(&device, &small, &results, "code")
                .unwrap()
                .failed_before
        );
        results.pop();
        assert!(Later::of(&device, &small, &results, "code").is_none());
    }
}
