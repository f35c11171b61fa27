//! Checking one kernel file against one puzzle: compile, verify the entry, run every case on the
//! chosen backends, compare with the reference. No printing: [`evaluate`] returns an [`Outcome`]
//! that `check` reports and `validate`/`grade` tabulate.
//!
//! Data flow (ARCHITECTURE.md, "Data flow of `runner check`"): the spec's cases; NVRTC compiles
//! once per distinct macro set and the PTX's entry is checked against the spec (`compile`); then
//! the simulator runs the small cases (for its checks) and the GPU, in a worker process with a
//! time limit, runs every case where there is one (`run`), until a timeout or a trap
//! (`sequence`). A wrong case is cut to the smallest size that still fails, when the puzzle can
//! shrink its cases (`shrink`); the GPU worker's client side is `remote`, its server side
//! `resident`, and `grade`'s second pass over the full cases `later`.
//!
//! May import `judge` and `workbook`; never `report` (a check returns data; reports print it),
//! `show`, `bench`, `classroom` or `cmd`.

pub mod compile;
pub mod later;
pub mod prerun;
pub mod remote;
pub mod resident;
pub mod run;
pub mod sequence;
pub mod shrink;

use crate::judge::agreement;
use crate::judge::outcome::dedup;
use crate::workbook::install;
use gpu::Device;
use gpu::pool::Worker;
use spec::{Case, Diagnostic, Puzzle, Scale};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::judge::outcome::{Backend, BackendChoice, CaseResult, Outcome, QuickTiming};
pub use compile::{located, ptx, sim_options, with_declared_launch};
pub use run::kernel_run;

/// What to check and how.
pub struct Request {
    pub puzzle: Puzzle,
    pub file: PathBuf,
    pub backend: BackendChoice,
    /// Per-case wall-clock limit on the GPU.
    pub gpu_limit: Duration,
    /// Run only the case of this name.
    pub only_case: Option<String>,
    /// Leave the GPU's full-scale cases for `later::finish` (`grade`: every
    /// submission's small cases before any full case).
    pub full_later: bool,
}

/// Checks `req.file` against `req.puzzle`. `Err` only for usage problems (an unreadable file, a GPU
/// asked for where there is none); everything about the kernel itself is in the [`Outcome`].
/// GPU cases go to `gpu`, a warm worker the caller may keep for its next check (`watch`, `grade`);
/// they run while the simulator runs the small cases.
/// A file that is not UTF-8 is read leniently, with a warning among the notes.
pub fn evaluate(req: &Request, gpu: &mut Worker) -> anyhow::Result<Outcome> {
    let file = crate::workbook::display(&req.file);
    let (code, warning) = crate::workbook::source_text::read(&req.file, &file)?;
    let mut outcome = evaluate_text(req, gpu, file, code)?;
    outcome.notes.splice(0..0, warning);
    Ok(outcome)
}

fn evaluate_text(
    req: &Request,
    gpu: &mut Worker,
    file: String,
    code: String,
) -> anyhow::Result<Outcome> {
    let puzzle = &req.puzzle;
    let want_gpu = req.backend != BackendChoice::Sim && gpu::libcuda_present();
    if want_gpu {
        // It creates its CUDA context while this process compiles and simulates.
        gpu.start(Some(&puzzle.wire_id()));
    }
    if req.backend == BackendChoice::Gpu && !matches!(gpu.device(), Ok(Some(_))) {
        anyhow::bail!(
            "--backend gpu: no CUDA device found (libcuda did not load or reports no GPU); use --backend sim"
        );
    }
    let locate = |d: Diagnostic| located(puzzle, &code, d);
    if let Err(d) = install::ensure_nvrtc() {
        return Ok(failed_early(req, &file, locate(d)));
    }
    let (cases, full) = chosen_cases(req, gpu, want_gpu)?;
    let warnings = match compile::cases(puzzle, &code, &file, &cases) {
        Ok(warnings) => warnings,
        Err(d) => return Ok(failed_early(req, &file, locate(d))),
    };
    let on = (req.backend != BackendChoice::Gpu, want_gpu);
    let text = run::Code {
        text: &code,
        file: &file,
    };
    let ran = run::backends(req, gpu, text, &cases, full, on);
    let mut outcome = gathered(req, ran, &code, file);
    outcome.warnings = warnings;
    Ok(outcome)
}

/// The cases to run: the puzzle's small ones, or only the one `--case` names (looked for among
/// the GPU worker's full-scale cases too, which then come back with it). Full-scale cases are
/// made, run and judged in the GPU worker, which keeps them from one check to the next
/// (`gpu::resident`); here they are stand-ins without data.
fn chosen_cases(
    req: &Request,
    gpu: &mut Worker,
    want_gpu: bool,
) -> anyhow::Result<(Vec<Case>, Option<Vec<Case>>)> {
    let puzzle = &req.puzzle;
    let mut cases = puzzle.graded_cases(Scale::Small);
    let mut full = None;
    if let Some(only) = &req.only_case {
        if want_gpu && !cases.iter().any(|c| &c.name == only) {
            full = Some(remote::full_cases(puzzle, gpu));
            cases.extend(full.clone().into_iter().flatten());
        }
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
    Ok((cases, full))
}

/// The outcome of what the backends ran: their results and diagnostics (placed in the code,
/// repeats folded), the notes on what ran where, the agreement and the GPU's glance at the time.
fn gathered(req: &Request, ran: run::Ran, code: &str, file: String) -> Outcome {
    let puzzle = &req.puzzle;
    let mut backends = vec![];
    let mut notes = vec![];
    let mut results = vec![];
    let mut diagnostics = vec![];
    if let Some(sim) = ran.sim {
        backends.push(Backend::Sim);
        results.extend(sim.results);
        diagnostics.extend(sim.diagnostics);
    }
    let mut full_case = None;
    let mut later = None;
    match ran.gpu {
        Ok(Some(on_gpu)) => {
            let (device, r) = (&on_gpu.device, &on_gpu.judged.results);
            backends.push(Backend::Gpu);
            notes.push(format!("GPU: {} ({})", device.name, device.arch()));
            full_case = quick_timing(device, &on_gpu.cases, r);
            later = crate::judge::outcome::Later::of(device, &on_gpu.cases, r, code);
            results.extend(on_gpu.judged.results);
            diagnostics.extend(on_gpu.judged.diagnostics);
        }
        Ok(None) if req.backend == BackendChoice::Auto => notes.push(
            "no CUDA GPU here: the small cases ran on the simulator; full-scale cases need a GPU"
                .into(),
        ),
        Ok(None) => {}
        Err(d) => notes.push(format!(
            "the GPU worker could not start ({}): the small cases ran on the simulator only",
            d.message
        )),
    }
    let mut diagnostics: Vec<Diagnostic> = diagnostics
        .into_iter()
        .map(|d| located(puzzle, code, d))
        .collect();
    dedup(&mut diagnostics);
    let backend_agreement = agreement(&results);
    if let Some(a) = &backend_agreement {
        notes.push(format!(
            "sim and gpu: {}/{} cases identical bit for bit (largest difference {} ulp)",
            a.identical, a.cases, a.max_ulp
        ));
    }
    let passed = !results.is_empty() && results.iter().all(|r| r.passed) && diagnostics.is_empty();
    Outcome {
        puzzle: puzzle.id.to_string(),
        file,
        passed,
        backends,
        cases: results,
        diagnostics,
        warnings: vec![],
        backend_agreement,
        full_case,
        notes,
        later,
    }
}

/// The full-scale case's time on the GPU from this check's one launch (not a benchmark), with its
/// share of the FP32 FMA peak when `runner bench` has measured the device's peaks.
pub fn quick_timing(
    device: &Device,
    cases: &[Case],
    results: &[CaseResult],
) -> Option<QuickTiming> {
    let full = cases.iter().find(|c| c.scale == Scale::Full)?;
    let result = results
        .iter()
        .find(|r| r.name == full.name && r.shrunk_from.is_none() && r.passed)?;
    let flop = 2.0 * full.job.work as f64;
    let peaks = gpu::bench::cached_peaks(device);
    Some(QuickTiming {
        case: full.name.clone(),
        device: device.name.clone(),
        seconds: result.seconds,
        fma_peak_share: peaks.map(|p| flop / result.seconds / (p.fma_tflops * 1e12)),
    })
}

/// A GPU worker: this same binary's `gpu-worker`, started on first use (see [`Worker`]).
pub fn gpu_worker() -> Worker {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("runner"));
    Worker::new(exe, &["gpu-worker"])
}

/// The outcome of a check that stopped before any case ran (the file did not compile, say).
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
        full_case: None,
        notes: vec![],
        later: None,
    }
}
