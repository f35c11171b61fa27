//! Checking one kernel file against one puzzle: compile, verify the entry, run every case on the
//! chosen backends, compare with the reference. No printing: [`evaluate`] returns an [`Outcome`]
//! that `check` reports and `validate`/`grade` tabulate.
//!
//! Data flow (DESIGN.md): the spec's cases; NVRTC compiles once per distinct macro set; the PTX's
//! entry is checked against the spec; then the simulator runs the small cases (for its checks) and
//! the GPU, in a worker process with a time limit, runs every case where there is one. A wrong
//! case is cut to the smallest size that still fails, when the puzzle can shrink its cases.

use crate::toolchain;
use kernels::nvrtc::{self, Compiled, Source, Target};
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
    pub output: Vec<f32>,
    pub expected: Vec<f64>,
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
    let cases = (puzzle.cases)(scale);
    let mut macro_sets: Vec<&Vec<(String, String)>> = cases.iter().map(|c| &c.macros).collect();
    macro_sets.dedup();
    for macros in macro_sets {
        let checked = ptx(&code, &file, macros)
            .and_then(|ptx| kernels::entry::check(&ptx, puzzle.kernel, puzzle.params, &file));
        if let Err(d) = checked {
            return Ok(Outcome::failed_early(req, &file, locate(d, None)));
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
            let only_wrong = diags
                .iter()
                .all(|d| matches!(d.kind, Kind::WrongOutput | Kind::UnwrittenOutput));
            let shrinkable = !result.passed && only_wrong && !result.output.is_empty();
            if let Some(smaller) = shrinkable
                .then(|| shrink_failure(puzzle, case, backend, &run))
                .flatten()
            {
                diags.extend(smaller.1);
                results.push(result);
                results.push(smaller.0);
                diagnostics.extend(diags.into_iter().map(|d| locate(d, Some(&case.name))));
                continue;
            }
            diagnostics.extend(diags.into_iter().map(|d| locate(d, Some(&case.name))));
            results.push(result);
        }
    }
    dedup(&mut diagnostics);
    let passed = !results.is_empty() && results.iter().all(|r| r.passed) && diagnostics.is_empty();
    Ok(Outcome {
        puzzle: puzzle.id.to_string(),
        file,
        passed,
        backends,
        cases: results,
        diagnostics,
        notes,
        rerun: req.rerun.clone(),
    })
}

fn run_case(backend: Backend, code: &str, file: &str, case: &Case, req: &Request) -> RunOutput {
    match backend {
        Backend::Sim => match ptx(code, file, &case.macros) {
            Ok(ptx) => kernels::sim::run(&ptx, &case.job),
            Err(d) => RunOutput {
                diagnostics: vec![d],
                ..RunOutput::default()
            },
        },
        Backend::Gpu => {
            let request = kernels::worker::Request {
                code: code.to_string(),
                file: file.to_string(),
                macros: case.macros.clone(),
                job: case.job.clone(),
            };
            let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("runner"));
            kernels::worker::run_isolated(&exe, &["gpu-worker"], &request, req.gpu_limit)
        }
    }
}

/// The PTX of `code` with `macros` (NVRTC memoizes: each macro set compiles once per process).
fn ptx(code: &str, file: &str, macros: &[(String, String)]) -> Result<String, Diagnostic> {
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

/// Compares a run with the case's reference; returns the result and the diagnostics it earned.
pub fn judge(
    puzzle: &Puzzle,
    case: &Case,
    backend: Backend,
    out: RunOutput,
) -> (CaseResult, Vec<Diagnostic>) {
    let output = out.outputs.into_iter().next().unwrap_or_default();
    let mut diagnostics = out.diagnostics;
    let complete = output.len() == case.expected.len();
    let mismatches: Vec<usize> = if complete {
        (0..output.len())
            .filter(|&i| !puzzle.tolerance.accepts(output[i], case.expected[i]))
            .collect()
    } else {
        vec![]
    };
    let max_abs_err = complete
        .then(|| {
            output
                .iter()
                .zip(&case.expected)
                .map(|(&o, &e)| (f64::from(o) - e).abs())
                .fold(0.0, f64::max)
        })
        .filter(|e: &f64| e.is_finite());
    let launched_ok = diagnostics.is_empty();
    if complete && !mismatches.is_empty() && launched_ok {
        let unwritten: Vec<usize> = mismatches
            .iter()
            .copied()
            .filter(|&i| output[i].is_nan())
            .collect();
        let owner = |i: usize| owner_text(case, i);
        if let Some(&first) = unwritten.first() {
            diagnostics.push(Diagnostic::new(
                Kind::UnwrittenOutput,
                format!(
                    "{} of {} output elements were never written (still NaN), the first is [{first}]{}: \
                     check the guard and that every output index is covered",
                    unwritten.len(),
                    output.len(),
                    owner(first)
                ),
            ));
        }
        if let Some(&first) = mismatches.iter().find(|&&i| !output[i].is_nan()) {
            diagnostics.push(Diagnostic::new(
                Kind::WrongOutput,
                format!(
                    "{} of {} elements differ; the first is [{first}]: yours {:.6} but expected {:.6}{}",
                    mismatches.len() - unwritten.len(),
                    output.len(),
                    output[first],
                    case.expected[first],
                    owner(first)
                ),
            ));
        }
    }
    let passed = complete && mismatches.is_empty() && diagnostics.is_empty();
    let result = CaseResult {
        name: case.name.clone(),
        backend,
        passed,
        max_abs_err,
        params: case.params().into_iter().collect(),
        seconds: out.seconds,
        instructions: out.instructions,
        output,
        expected: case.expected.clone(),
    };
    (result, diagnostics)
}

/// " (block (b,0,0) thread (t,0,0) owns it)" for 1D launches with one output per thread.
pub fn owner_text(case: &Case, i: usize) -> String {
    let l = case.job.launch;
    let threads = u64::from(l.threads_per_block()) * l.blocks();
    if l.grid[1] * l.grid[2] * l.block[1] * l.block[2] != 1
        || (case.expected.len() as u64) > threads
    {
        return String::new();
    }
    let tpb = l.block[0] as usize;
    format!(
        ", owned by block ({},0,0) thread ({},0,0)",
        i / tpb,
        i % tpb
    )
}

/// Keeps the first diagnostic of each kind and location (the same mistake in every case is one
/// diagnosis), at most a few of each kind.
fn dedup(diagnostics: &mut Vec<Diagnostic>) {
    const KEEP: usize = 3;
    let mut seen: HashMap<(Kind, Option<u32>, String), usize> = HashMap::new();
    let mut kept = vec![];
    for d in diagnostics.drain(..) {
        let key = match d.line {
            Some(_) => (d.kind, d.line, d.file.clone().unwrap_or_default()),
            None => (d.kind, None, d.message.clone()),
        };
        let n = seen.entry(key).or_insert(0);
        *n += 1;
        let same_kind = kept
            .iter()
            .filter(|k: &&Diagnostic| k.kind == d.kind)
            .count();
        if *n == 1 && same_kind < KEEP {
            kept.push(d);
        }
    }
    *diagnostics = kept;
}
