//! Checking one kernel file against one puzzle: compile, verify the entry, run every case on the
//! chosen backends, compare with the reference. No printing: [`evaluate`] returns an [`Outcome`]
//! that `check` reports and `validate`/`grade` tabulate.
//!
//! Data flow (ARCHITECTURE.md, "Data flow of `runner check`"): the spec's cases; NVRTC compiles once per distinct macro set; the PTX's
//! entry is checked against the spec; then the simulator runs the small cases (for its checks) and
//! the GPU, in a worker process with a time limit, runs every case where there is one, until a
//! timeout or a trap (`sequence`). A wrong case is cut to the smallest size that still fails,
//! when the puzzle can shrink its cases.

pub mod later;
pub mod prerun;
pub mod remote;
pub mod resident;
pub mod sequence;
pub mod shrink;

use crate::judge::agreement;
use crate::workbook::install;
use gpu::Device;
use gpu::pool::Worker;
use gpu::worker::{self, KernelRun};
use spec::{Case, Diagnostic, Kind, Puzzle, RunOutput, Scale};
use std::path::PathBuf;
use std::time::Duration;
use toolchain::nvrtc::{self, Compiled, Source, Target};

use crate::check::sequence::run_backend;
use crate::judge::outcome::dedup;
pub use crate::judge::outcome::{Backend, BackendChoice, CaseResult, Outcome, QuickTiming};

/// What to check and how.
pub struct Request {
    pub puzzle: Puzzle,
    pub file: PathBuf,
    pub backend: BackendChoice,
    /// Per-case wall-clock limit on the GPU.
    pub gpu_limit: Duration,
    /// The command line that runs this check again, for the report's last lines.
    pub rerun: String,
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
    // Full-scale cases are made, run and judged in the GPU worker, which keeps them from one
    // check to the next (`gpu::resident`); here they are stand-ins without data.
    let mut cases = puzzle.graded_cases(Scale::Small);
    let mut full = None;
    if let Some(only) = &req.only_case {
        if want_gpu && !cases.iter().any(|c| &c.name == only) {
            full = Some(crate::check::remote::full_cases(puzzle, gpu));
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
    let compiling = gpu::trace::phase("compile to PTX, check the entry, warnings");
    let mut macro_sets: Vec<&Vec<(String, String)>> = cases.iter().map(|c| &c.macros).collect();
    macro_sets.dedup();
    let mut warnings: Vec<toolchain::warnings::Warning> = vec![];
    for macros in macro_sets {
        // A puzzle whose kernel declares its launch (08) fails here too when the shape is
        // missing or impossible; each case's launch is set from it in `run_case`.
        let checked = ptx(&code, &file, macros).and_then(|ptx| {
            spec::entry::check(&ptx, puzzle.kernel, puzzle.params, &file)?;
            puzzle.resolve_launch(&ptx, &file, &mut [])
        });
        if let Err(d) = checked {
            return Ok(failed_early(req, &file, locate(d)));
        }
        let source = Source {
            code: &code,
            file: &file,
            macros,
        };
        for w in toolchain::warnings::of(&source, &Target::Ptx) {
            let w = explained(w, puzzle);
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    drop(compiling);
    let small: Vec<Case> = cases
        .iter()
        .filter(|c| c.scale == Scale::Small)
        .cloned()
        .collect();
    let on_sim = req.backend != BackendChoice::Gpu;
    let (sim, gpu_part) = std::thread::scope(|s| {
        let gpu_part = want_gpu.then(|| {
            s.spawn(|| {
                let device = gpu.device()?;
                let Some(device) = device else {
                    return Ok(None);
                };
                let mut cases = cases.clone();
                if req.only_case.is_none() {
                    cases.extend(
                        full.clone()
                            .unwrap_or_else(|| crate::check::remote::full_cases(puzzle, gpu)),
                    );
                }
                // The full cases' requests and the small ones' share the worker.
                let gpu = std::cell::RefCell::new(gpu);
                let mut remote = |case: &Case, shrink: bool| {
                    if req.full_later {
                        return ((crate::judge::outcome::waiting(case), vec![]), None);
                    }
                    crate::check::remote::call(
                        &gpu,
                        puzzle,
                        &code,
                        &file,
                        case,
                        shrink,
                        req.gpu_limit,
                    )
                };
                let mut run = |case: &Case| match with_declared_launch(puzzle, &code, &file, case) {
                    Ok(own) => {
                        let request = worker::Request::Run(kernel_run(&code, &file, &own));
                        (gpu.borrow_mut().call(&request, req.gpu_limit).output, own)
                    }
                    Err(d) => (RunOutput::failed(d), case.clone()),
                };
                let all = gpu::trace::phase("GPU: every case, run and judged");
                let (r, mut d) =
                    run_backend(puzzle, Backend::Gpu, &cases, &mut run, Some(&mut remote));
                crate::check::sequence::explain_printing_timeout(&mut d, &r, &cases);
                let ran = (r, d);
                drop(all);
                Ok(Some((device, ran, cases)))
            })
        });
        let sim = on_sim.then(|| {
            let one = |case: &Case| run_on_sim(puzzle, &code, &file, case);
            let prerun = gpu::trace::phase("simulator: the small cases, on every core");
            let mut ran = crate::check::prerun::prerun(&small, &one);
            drop(prerun);
            let _judged = gpu::trace::phase("simulator: judge (and shrink)");
            // A case run ahead is taken from there; a shrunk case, or one not run ahead, here.
            let mut run = |case: &Case| {
                let ahead = small.iter().position(|c| c.name == case.name);
                ahead
                    .and_then(|i| ran[i].take())
                    .unwrap_or_else(|| one(case))
            };
            run_backend(puzzle, Backend::Sim, &small, &mut run, None)
        });
        let gpu_part: Result<_, Diagnostic> = match gpu_part {
            Some(handle) => handle.join().expect("the GPU thread does not panic"),
            None => Ok(None),
        };
        (sim, gpu_part)
    });
    let mut backends = vec![];
    let mut notes = vec![];
    let mut results = vec![];
    let mut diagnostics = vec![];
    if let Some((r, d)) = sim {
        backends.push(Backend::Sim);
        results.extend(r);
        diagnostics.extend(d);
    }
    let mut full_case = None;
    let mut later = None;
    match gpu_part {
        Ok(Some((device, (r, d), cases))) => {
            backends.push(Backend::Gpu);
            notes.push(format!("GPU: {} ({})", device.name, device.arch()));
            full_case = quick_timing(&device, &cases, &r);
            later = crate::judge::outcome::Later::of(&device, &cases, &r, &code);
            results.extend(r);
            diagnostics.extend(d);
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
    let mut diagnostics: Vec<Diagnostic> = diagnostics.into_iter().map(locate).collect();
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
        full_case,
        notes,
        rerun: req.rerun.clone(),
        later,
    })
}

/// `d` with its chapter, and at the line that declares what it is about (`at_declaration`).
pub fn located(puzzle: &Puzzle, code: &str, mut d: Diagnostic) -> Diagnostic {
    d.chapter = Some(format!("book/src/{}", puzzle.chapter_file()));
    at_declaration(d, code)
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

/// A declaration the runner refuses (a launch shape no GPU launches, a tensor map the encoder
/// would not take) is found knowing only the PTX, so its diagnostic says line 1; it belongs at
/// the line that declares the array its message names first (`` `launch_shape` = {...}: ...``,
/// `` `tensor_maps`: map ...``). One about a declaration that is missing stays at line 1.
fn at_declaration(mut d: Diagnostic, code: &str) -> Diagnostic {
    if d.kind != Kind::BadLaunchShape || d.line != Some(1) {
        return d;
    }
    let named = d.message.strip_prefix('`').and_then(|m| m.split_once('`'));
    let Some((symbol, _)) = named.filter(|(s, _)| !s.is_empty()) else {
        return d;
    };
    let declares = |l: &str| {
        let l = l.trim_start();
        !l.starts_with("//") && l.contains(&format!("{symbol}[")) && l.contains("__device__")
    };
    if let Some(n) = code.lines().position(declares) {
        d.line = Some(n as u32 + 1);
    }
    d
}

/// The simulator's options for `code` compiled with `macros`: the checks, with the learner's
/// `__shared__` declarations and pointers into them, so that findings name arrays in their
/// declared type and shape, and the pointer a line indexes through.
pub fn sim_options(code: &str, macros: &[(String, String)]) -> sim::SimOptions {
    let shared = ptx::declared::parse(code, macros);
    sim::SimOptions {
        aliases: ptx::declared::aliases(code, &shared),
        shared,
        ..sim::SimOptions::default()
    }
}

/// One case on the simulator, with the launch the kernel declares where it declares one.
fn run_on_sim(puzzle: &Puzzle, code: &str, file: &str, case: &Case) -> (RunOutput, Case) {
    match with_declared_launch(puzzle, code, file, case) {
        Ok(own) => match ptx(code, file, &own.macros) {
            Ok(ptx) => (
                sim::run_with(&ptx, &own.job, &sim_options(code, &own.macros)),
                own,
            ),
            Err(d) => (RunOutput::failed(d), own),
        },
        Err(d) => (RunOutput::failed(d), case.clone()),
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

/// A GPU worker: this same binary's `gpu-worker`, started on first use (see [`Worker`]).
pub fn gpu_worker() -> Worker {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("runner"));
    Worker::new(exe, &["gpu-worker"])
}

/// The PTX of `code` with `macros` (NVRTC memoizes: each macro set compiles once per process).
pub fn ptx(code: &str, file: &str, macros: &[(String, String)]) -> Result<String, Diagnostic> {
    match nvrtc::compile(&Source { code, file, macros }, &Target::Ptx)? {
        Compiled::Ptx(ptx) => Ok(ptx),
        Compiled::Cubin(_) => unreachable!("a PTX target gives PTX"),
    }
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
        rerun: req.rerun.clone(),
        later: None,
    }
}

/// NVRTC's warning that a variable is "declared but never referenced", where the variable is the
/// launch shape the runner reads from the compiled kernel (a `const` without `extern "C"` has
/// internal linkage, so NVRTC sees no use of it): said as what it is, and how to avoid it.
fn explained(mut w: toolchain::warnings::Warning, puzzle: &Puzzle) -> toolchain::warnings::Warning {
    if let Some(d) = puzzle.declared_launch {
        let unused = format!(
            "variable \"{}\" was declared but never referenced",
            d.symbol
        );
        if w.message.starts_with(&unused) {
            w.message = format!(
                "{}: the runner reads `{}` from the compiled kernel, not your code, and it found it; declare it `extern \"C\" __device__ const int {}[...]`, as the chapter does, and NVRTC keeps it as used without this warning",
                w.message, d.symbol, d.symbol
            );
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unused_launch_shape_warning_is_explained_and_others_are_left_alone() {
        let warn = |m: &str| toolchain::warnings::Warning {
            file: "k.cu".into(),
            line: 3,
            message: m.into(),
        };
        let p08 = puzzle_08::spec();
        let unused = "variable \"launch_shape\" was declared but never referenced (#177-D)";
        let w = explained(warn(unused), &p08);
        assert!(
            w.message.starts_with(unused) && w.message.contains("extern \"C\""),
            "{}",
            w.message
        );
        let other = "variable \"x\" was declared but never referenced (#177-D)";
        assert_eq!(explained(warn(other), &p08).message, other);
        assert_eq!(explained(warn(unused), &puzzle_04::spec()).message, unused);
    }
}
