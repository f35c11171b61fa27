//! `grade` on a GPU: every submission's small cases first, then the full-scale ones.
//!
//! A fault (a trap, a failed `assert`, a stack overflow) ends its worker's CUDA context, and the
//! driver recovers from it only once the kernel another worker has on the GPU ends: a trap that
//! comes while another submission's full case runs to its 10 s limit (a `printf` flood) waits for
//! that kernel, and its row reads `timeout` as well (`bench/RESULTS.md`). Faults come in the
//! small cases, which every submission runs first; so `grade` checks each submission with its
//! GPU full cases left waiting (`outcome::waiting`, `check::Request::full_later`), and runs them,
//! every submission's, only when every submission's small cases are done ([`finish`]). The
//! verdicts, messages and scores are those of one check that runs all its cases in order: the
//! full cases run in the same sequence (`sequence::run_backend`), with the small cases' first
//! failure still the one that is cut smaller.
//!
//! A long kernel holds up more than its own worker: while a `printf` flood runs, another
//! worker's CUDA context takes seconds to start and another's kernel waits (on an H200, correct
//! submissions' full cases took 12 to 17 s beside it, and with four jobs two or three of them timed
//! out). Kernels of different CUDA contexts take turns on the GPU anyway, so `grade` runs the
//! full cases one submission after another on one worker: the flood runs to its limit alone, and
//! every other full case, a few milliseconds on the device, keeps its time.

use crate::check::sequence::{explain_printing_timeout, run_backend};
use crate::check::{self, Request};
use crate::judge::agreement;
use crate::judge::outcome::{Backend, Outcome, dedup, is_waiting};
use gpu::pool::Worker;
use spec::{Case, RunOutput};
use std::cell::RefCell;

/// Runs the full cases `outcome` left waiting on `gpu` and puts their results, diagnostics and
/// timing where one check would have: the outcome is then the same as `check::evaluate` without
/// [`Request::full_later`] gives.
pub fn finish(req: &Request, gpu: &mut Worker, outcome: &mut Outcome) {
    let Some(later) = outcome.later.take() else {
        return;
    };
    let _phase = gpu::trace::phase_of(|| format!("grade: full cases of {}", outcome.file));
    let (puzzle, file) = (&req.puzzle, outcome.file.clone());
    let gpu = RefCell::new(gpu);
    let mut remote = |case: &Case, first_failure: bool| {
        let shrink = first_failure && !later.failed_before;
        crate::check::remote::call(
            &gpu,
            puzzle,
            &later.code,
            &file,
            case,
            shrink,
            req.gpu_limit,
        )
    };
    let mut run = |case: &Case| -> (RunOutput, Case) {
        unreachable!("case {} is full-scale: the worker runs it", case.name)
    };
    let (results, mut diagnostics) = run_backend(
        puzzle,
        Backend::Gpu,
        &later.cases,
        &mut run,
        Some(&mut remote),
    );
    outcome.cases.retain(|r| !is_waiting(r));
    let so_far = outcome.cases.iter().chain(&results);
    explain_printing_timeout(&mut diagnostics, so_far, &later.cases);
    outcome.full_case = check::quick_timing(&later.device, &later.cases, &results);
    outcome.cases.extend(results);
    let located = diagnostics
        .into_iter()
        .map(|d| check::located(puzzle, &later.code, d));
    outcome.diagnostics.extend(located);
    dedup(&mut outcome.diagnostics);
    outcome.backend_agreement = agreement(&outcome.cases);
    outcome.passed = !outcome.cases.is_empty()
        && outcome.cases.iter().all(|r| r.passed)
        && outcome.diagnostics.is_empty();
}
