//! Checking one kernel file against one puzzle: compile, verify the entry, run every case on the
//! chosen backends, compare with the reference. No printing: [`evaluate`] returns an [`Outcome`]
//! that `check` reports and `validate`/`grade` tabulate.
//!
//! Data flow (DESIGN.md): the spec's cases; NVRTC compiles once per distinct macro set; the PTX's
//! entry is checked against the spec; then the simulator runs the small cases (for its checks) and
//! the GPU, in a worker process with a time limit, runs every case where there is one. A wrong
//! case is cut to the smallest size that still fails, when the puzzle can shrink its cases.

use crate::judge::{Agreement, agreement, judge};
use crate::toolchain;
use kernels::nvrtc::{self, Compiled, Source, Target};
use kernels::worker::{self, KernelRun, Reply};
use kernels::{Case, Diagnostic, Kind, Puzzle, RunOutput, Scale};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Which backends a check may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The simulator for the small cases, and the GPU for every case where there is one.
    Auto,
    Gpu,
    Sim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

/// One case on one backend, as `--json` reports it.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub backend: Backend,
    pub passed: bool,
    /// Largest |yours - expected| over the elements (null when nothing came back or a value is NaN).
    pub max_abs_err: Option<f64>,
    pub params: HashMap<String, i32>,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// The most global reads and writes any one thread made (simulator only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<kernels::job::AccessStats>,
    pub output: Vec<f32>,
    pub expected: Vec<f64>,
    /// The first element outside the puzzle's tolerance (or still NaN), for the report's diff.
    #[serde(skip)]
    pub first_mismatch: Option<usize>,
    /// For a shrunk case: the case it was cut from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<String>,
    /// What the kernel's `printf` calls printed (the simulator names the thread of each).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub printed: Vec<kernels::job::Printed>,
    /// Entries printed past the ones kept.
    #[serde(skip_serializing_if = "kernels::job::is_zero")]
    pub printed_more: u64,
}

/// Everything one check found.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub puzzle: String,
    pub file: String,
    pub passed: bool,
    pub backends: Vec<Backend>,
    pub cases: Vec<CaseResult>,
    pub diagnostics: Vec<Diagnostic>,
    /// NVRTC's warnings about the kernel (it compiled; they do not fail it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<kernels::warnings::Warning>,
    /// Where both backends ran a case: do their outputs agree bit for bit?
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_agreement: Option<Agreement>,
    /// Lines for people: what ran where, what was skipped and why.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// The command that checks this file again.
    #[serde(skip)]
    pub rerun: String,
}

/// What to check and how.
pub struct Request {
    pub puzzle: Puzzle,
    pub file: PathBuf,
    pub backend: BackendChoice,
    /// Per-case wall-clock limit of the GPU worker.
    pub gpu_limit: Duration,
    /// The command line that runs this check again, for the report's last lines.
    pub rerun: String,
    /// Run only the case of this name.
    pub only_case: Option<String>,
}

impl Outcome {
    fn failed_early(req: &Request, file: &str, d: Diagnostic) -> Outcome {
        Outcome {
            puzzle: req.puzzle.id.to_string(),
            file: file.to_string(),
            passed: false,
            backends: vec![],
            cases: vec![],
            diagnostics: vec![d],
            warnings: vec![],
            backend_agreement: None,
            notes: vec![],
            rerun: req.rerun.clone(),
        }
    }
}

/// Checks `req.file` against `req.puzzle`. `Err` only for usage problems (an unreadable file, a GPU
/// asked for where there is none); everything about the kernel itself is in the [`Outcome`].
pub fn evaluate(req: &Request) -> anyhow::Result<Outcome> {
    let puzzle = &req.puzzle;
    let file = crate::workbook::display(&req.file);
    let code = std::fs::read_to_string(&req.file)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", req.file.display()))?;
    let device = match req.backend {
        BackendChoice::Sim => None,
        _ => kernels::gpu::probe(),
    };
    if req.backend == BackendChoice::Gpu && device.is_none() {
        anyhow::bail!(
            "--backend gpu: no CUDA device found (libcuda did not load or reports no GPU); use --backend sim"
        );
    }
    let chapter = format!("book/src/{}", puzzle.chapter_file());
    let locate = |mut d: Diagnostic, case: Option<&str>| {
        d.case = case.map(str::to_string);
        d.chapter = Some(chapter.clone());
        d
    };
    if let Err(d) = toolchain::ensure_nvrtc() {
        return Ok(Outcome::failed_early(req, &file, locate(d, None)));
    }
    let scale = if device.is_some() {
        Scale::Full
    } else {
        Scale::Small
    };
    let mut cases = (puzzle.cases)(scale);
    if let Some(only) = &req.only_case {
        let names: Vec<String> = cases.iter().map(|c| c.name.clone()).collect();
        cases.retain(|c| &c.name == only);
        if cases.is_empty() {
            anyhow::bail!(
                "{} has no case `{only}` here; its cases are: {}",
                puzzle.id,
                names.join(", ")
            );
        }
    }
    let mut macro_sets: Vec<&Vec<(String, String)>> = cases.iter().map(|c| &c.macros).collect();
    macro_sets.dedup();
    let mut warnings: Vec<kernels::warnings::Warning> = vec![];
    for macros in macro_sets {
        // A puzzle whose kernel declares its launch (08) fails here too when the shape is
        // missing or impossible; each case's launch is set from it in `run_case`.
        let checked = ptx(&code, &file, macros).and_then(|ptx| {
            kernels::entry::check(&ptx, puzzle.kernel, puzzle.params, &file)?;
            puzzle.resolve_launch(&ptx, &file, &mut [])
        });
        if let Err(d) = checked {
            return Ok(Outcome::failed_early(req, &file, locate(d, None)));
        }
        let source = Source {
            code: &code,
            file: &file,
            macros,
        };
        for w in kernels::warnings::of(&source, &Target::Ptx) {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    let mut backends = vec![];
    let mut notes = vec![];
    if req.backend != BackendChoice::Gpu {
        backends.push(Backend::Sim);
    }
    match &device {
        Some(d) => {
            backends.push(Backend::Gpu);
            notes.push(format!("GPU: {} ({})", d.name, d.arch()));
        }
        None if req.backend == BackendChoice::Auto => notes.push(
            "no CUDA GPU here: the small cases ran on the simulator; full-scale cases need a GPU"
                .into(),
        ),
        None => {}
    }
    let mut results = vec![];
    let mut diagnostics = vec![];
    for &backend in &backends {
        for case in cases
            .iter()
            .filter(|c| backend == Backend::Gpu || c.scale == Scale::Small)
        {
            let run = |case: &Case| run_case(backend, &code, &file, case, req);
            let (result, mut diags) = judge(puzzle, case, backend, run(case));
            // Only wrong values shrink usefully (an unwritten element is as plain at any size), and
            // the teaching cases are already as small as they are meant to be.
            let only_wrong = diags
                .iter()
                .all(|d| matches!(d.kind, Kind::WrongOutput | Kind::UnwrittenOutput))
                && diags.iter().any(|d| d.kind == Kind::WrongOutput)
                && !case.name.starts_with("example");
            // Shrink the first wrong case of each backend only: one small failure is enough to read.
            let first_failure = !results
                .iter()
                .any(|r: &CaseResult| r.backend == backend && !r.passed);
            let shrinkable =
                first_failure && !result.passed && only_wrong && !result.output.is_empty();
            let smaller = shrinkable
                .then(|| shrink_failure(puzzle, case, backend, &run))
                .flatten();
            results.push(result);
            if let Some((smaller, more)) = smaller {
                diags.extend(more);
                let shrunk_from = Some(case.name.clone());
                results.push(CaseResult {
                    shrunk_from,
                    ..smaller
                });
            }
            diagnostics.extend(diags.into_iter().map(|d| locate(d, Some(&case.name))));
        }
    }
    dedup(&mut diagnostics);
    let backend_agreement = agreement(&results);
    if let Some(a) = &backend_agreement {
        notes.push(format!(
            "sim and gpu: {}/{} cases identical bit for bit (largest difference {} ulp)",
            a.identical, a.cases, a.max_ulp
        ));
    }
    let passed = !results.is_empty() && results.iter().all(|r| r.passed) && diagnostics.is_empty();
    Ok(Outcome {
        puzzle: puzzle.id.to_string(),
        file,
        passed,
        backends,
        cases: results,
        diagnostics,
        warnings,
        backend_agreement,
        notes,
        rerun: req.rerun.clone(),
    })
}

/// `case` with its launch set from the shape the kernel declares, for puzzles that let the
/// kernel choose (08); otherwise the case as it is.
pub fn with_declared_launch(
    puzzle: &Puzzle,
    code: &str,
    file: &str,
    case: &Case,
) -> Result<Case, Diagnostic> {
    let mut own = case.clone();
    if puzzle.declared_launch.is_some() {
        let ptx = ptx(code, file, &case.macros)?;
        puzzle.resolve_launch(&ptx, file, std::slice::from_mut(&mut own))?;
    }
    Ok(own)
}

fn run_case(backend: Backend, code: &str, file: &str, case: &Case, req: &Request) -> RunOutput {
    let case = match with_declared_launch(&req.puzzle, code, file, case) {
        Ok(case) => case,
        Err(d) => {
            return RunOutput {
                diagnostics: vec![d],
                ..RunOutput::default()
            };
        }
    };
    let case = &case;
    match backend {
        Backend::Sim => match ptx(code, file, &case.macros) {
            Ok(ptx) => kernels::sim::run(&ptx, &case.job),
            Err(d) => RunOutput {
                diagnostics: vec![d],
                ..RunOutput::default()
            },
        },
        Backend::Gpu => {
            on_gpu(
                &worker::Request::Run(kernel_run(code, file, case)),
                req.gpu_limit,
            )
            .output
        }
    }
}

/// `case` as the GPU worker takes it.
pub fn kernel_run(code: &str, file: &str, case: &Case) -> KernelRun {
    KernelRun {
        code: code.to_string(),
        file: file.to_string(),
        macros: case.macros.clone(),
        job: case.job.clone(),
    }
}

/// Runs `request` in a GPU worker: this same binary's `gpu-worker`, in a child process that is
/// killed after `limit`.
pub fn on_gpu(request: &worker::Request, limit: Duration) -> Reply {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("runner"));
    worker::run_isolated(&exe, &["gpu-worker"], request, limit)
}

/// The PTX of `code` with `macros` (NVRTC memoizes: each macro set compiles once per process).
pub fn ptx(code: &str, file: &str, macros: &[(String, String)]) -> Result<String, Diagnostic> {
    match nvrtc::compile(&Source { code, file, macros }, &Target::Ptx)? {
        Compiled::Ptx(ptx) => Ok(ptx),
        Compiled::Cubin(_) => unreachable!("a PTX target gives PTX"),
    }
}

/// The smallest shrunk version of a failing case that still fails, if the puzzle can shrink.
fn shrink_failure(
    puzzle: &Puzzle,
    case: &Case,
    backend: Backend,
    run: &dyn Fn(&Case) -> RunOutput,
) -> Option<(CaseResult, Vec<Diagnostic>)> {
    let shrink = puzzle.shrink?;
    shrink(case)
        .iter()
        .map(|smaller| judge(puzzle, smaller, backend, run(smaller)))
        .find(|(r, _)| !r.passed)
}

/// Keeps the first diagnostics of each kind (one per source line, at most `KEEP`), and says how
/// many more of that kind there were.
fn dedup(diagnostics: &mut Vec<Diagnostic>) {
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

/// The first `n` of `names`, then how many more: `a, b, c and 4 more`.
pub fn fold(names: &[String], n: usize) -> String {
    if names.len() <= n {
        names.join(", ")
    } else {
        format!("{} and {} more", names[..n].join(", "), names.len() - n)
    }
}
