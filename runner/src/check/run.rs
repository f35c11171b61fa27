//! The run phase of a check: the simulator runs the small cases (ahead, on every core, then
//! judged in order) while, on a thread of its own, the GPU worker runs every case where there is
//! a GPU; each backend's cases in sequence (`sequence`), judged as they come.

use super::compile::{ptx, sim_options, with_declared_launch};
use super::sequence::{explain_printing_timeout, run_backend};
use super::{Request, remote};
use crate::judge::outcome::{Backend, CaseResult, Judged, waiting};
use gpu::Device;
use gpu::pool::Worker;
use gpu::worker::{self, KernelRun};
use spec::{Case, Diagnostic, Puzzle, RunOutput};
use std::cell::RefCell;

/// One backend's judged cases, in the order they ran, and the diagnostics they earned.
pub struct BackendRun {
    pub results: Vec<CaseResult>,
    pub diagnostics: Vec<Diagnostic>,
}

/// What the GPU ran: the device, its judged cases, and the cases (the full ones included).
pub struct OnGpu {
    pub device: Device,
    pub judged: BackendRun,
    pub cases: Vec<Case>,
}

/// What both backends ran: the simulator's cases (where it ran) and the GPU's (`Ok(None)`: no
/// GPU here; `Err`: its worker did not start).
pub struct Ran {
    pub sim: Option<BackendRun>,
    pub gpu: Result<Option<OnGpu>, Diagnostic>,
}

/// The code under check: its text and its file's name as reports give it.
#[derive(Clone, Copy)]
pub struct Code<'a> {
    pub text: &'a str,
    pub file: &'a str,
}

/// Runs `cases` on the backends `req` asks for, the simulator (the small ones, when `on_sim`) and
/// the GPU (when `on_gpu`; every case, with `full`, the worker's full-scale cases, when known),
/// at the same time.
pub fn backends(
    req: &Request,
    gpu: &mut Worker,
    code: Code<'_>,
    cases: &[Case],
    full: Option<Vec<Case>>,
    (on_sim, on_gpu): (bool, bool),
) -> Ran {
    std::thread::scope(|s| {
        let gpu_thread = on_gpu.then(|| s.spawn(|| gpu_cases(req, gpu, code, cases, full)));
        let sim = on_sim.then(|| sim_cases(&req.puzzle, code, cases));
        let gpu = match gpu_thread {
            Some(handle) => handle.join().expect("the GPU thread does not panic"),
            None => Ok(None),
        };
        Ran { sim, gpu }
    })
}

/// The GPU's part: every case (and the full ones) in the worker, judged as they come.
fn gpu_cases(
    req: &Request,
    gpu: &mut Worker,
    code: Code<'_>,
    cases: &[Case],
    full: Option<Vec<Case>>,
) -> Result<Option<OnGpu>, Diagnostic> {
    let puzzle = &req.puzzle;
    let Some(device) = gpu.device()? else {
        return Ok(None);
    };
    let mut cases = cases.to_vec();
    if req.only_case.is_none() {
        cases.extend(full.unwrap_or_else(|| remote::full_cases(puzzle, gpu)));
    }
    // The full cases' requests and the small ones' share the worker.
    let gpu = RefCell::new(gpu);
    let mut remote = |case: &Case, shrink: bool| {
        if req.full_later {
            return Judged::alone(waiting(case), vec![]);
        }
        remote::call(
            &gpu,
            puzzle,
            code.text,
            code.file,
            case,
            shrink,
            req.gpu_limit,
        )
    };
    let mut run = |case: &Case| match with_declared_launch(puzzle, code.text, code.file, case) {
        Ok(own) => {
            let request = worker::Request::Run(kernel_run(code.text, code.file, &own));
            (gpu.borrow_mut().call(&request, req.gpu_limit).output, own)
        }
        Err(d) => (RunOutput::failed(d), case.clone()),
    };
    let _all = gpu::trace::phase("GPU: every case, run and judged");
    let (results, mut diagnostics) =
        run_backend(puzzle, Backend::Gpu, &cases, &mut run, Some(&mut remote));
    explain_printing_timeout(&mut diagnostics, &results, &cases);
    Ok(Some(OnGpu {
        device,
        judged: BackendRun {
            results,
            diagnostics,
        },
        cases,
    }))
}

/// The simulator's part: the small cases of `cases`, run ahead on every core, then judged (and
/// the first failure shrunk) in order.
fn sim_cases(puzzle: &Puzzle, code: Code<'_>, cases: &[Case]) -> BackendRun {
    let small: Vec<Case> = cases
        .iter()
        .filter(|c| c.scale == spec::Scale::Small)
        .cloned()
        .collect();
    let one = |case: &Case| on_sim_one(puzzle, code.text, code.file, case);
    let prerun = gpu::trace::phase("simulator: the small cases, on every core");
    let mut ran = super::prerun::prerun(&small, &one);
    drop(prerun);
    let _judged = gpu::trace::phase("simulator: judge (and shrink)");
    // A case run ahead is taken from there; a shrunk case, or one not run ahead, here.
    let mut run = |case: &Case| {
        let ahead = small.iter().position(|c| c.name == case.name);
        ahead
            .and_then(|i| ran[i].take())
            .unwrap_or_else(|| one(case))
    };
    let (results, diagnostics) = run_backend(puzzle, Backend::Sim, &small, &mut run, None);
    BackendRun {
        results,
        diagnostics,
    }
}

/// One case on the simulator, with the launch the kernel declares where it declares one.
fn on_sim_one(puzzle: &Puzzle, code: &str, file: &str, case: &Case) -> (RunOutput, Case) {
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
