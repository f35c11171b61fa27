//! `grade` on a GPU: every submission's small cases first, then the full-scale ones.
//!
//! A fault (a trap, a failed `assert`, a stack overflow) ends its worker's CUDA context, and the
//! driver recovers from it only once the kernel another worker has on the GPU ends: a trap that
//! comes while another submission's full case runs to its 10 s limit (a `printf` flood) waits for
//! that kernel, and its row reads `timeout` as well (`bench/RESULTS.md`). Faults come in the
//! small cases, which every submission runs first; so `grade` checks each submission with its
//! GPU full cases left waiting ([`waiting`]: `engine::Request::full_later`), and runs them,
//! every submission's, only when every submission's small cases are done ([`finish`]). The
//! verdicts, messages and scores are those of one check that runs all its cases in order: the
//! full cases run in the same sequence (`sequence::run_backend`), with the small cases' first
//! failure still the one that is cut smaller.
//!
//! A long kernel holds up more than its own worker: while a `printf` flood runs, another
//! worker's CUDA context takes seconds to start and another's kernel waits (on an H200, correct
//! submissions' full cases took 12 to 17 s beside it, and with four workers three of them timed
//! out). Kernels of different CUDA contexts take turns on the GPU anyway, so `grade` runs the
//! full cases one submission after another on one worker: the flood runs to its limit alone, and
//! every other full case, a few milliseconds on the device, keeps its time.

use crate::engine::{self, Request};
use crate::judge::agreement;
use crate::outcome::{Backend, CaseResult, Outcome, dedup};
use crate::remote::Judged;
use crate::sequence::run_backend;
use gpu::Device;
use gpu::pool::Worker;
use spec::{Case, RunOutput};
use std::cell::RefCell;

/// What a full case left for later says in the meantime (never in a finished outcome).
const WAITING: &str = "left for the second pass, after every submission's small cases";

/// The GPU's full cases of one check, left for [`finish`].
#[derive(Clone, Debug)]
pub struct Later {
    device: Device,
    cases: Vec<Case>,
    code: String,
    /// Whether a small case failed on the GPU: then no full case is cut smaller.
    failed_before: bool,
}

impl Later {
    /// The full cases among `cases` that the GPU's run left waiting (`results`), if any.
    pub fn of(
        device: &Device,
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

/// A full case's stand-in result while it waits for the second pass.
pub fn waiting(case: &Case) -> Judged {
    let result = CaseResult::not_run(case, Backend::Gpu, WAITING.into());
    ((result, vec![]), None)
}

fn is_waiting(r: &CaseResult) -> bool {
    r.backend == Backend::Gpu && r.not_run.as_deref() == Some(WAITING)
}

/// Runs the full cases `outcome` left waiting on `gpu` and puts their results, diagnostics and
/// timing where one check would have: the outcome is then the same as `engine::evaluate` without
/// [`Request::full_later`] gives.
pub fn finish(req: &Request, gpu: &mut Worker, mut outcome: Outcome) -> Outcome {
    let Some(later) = outcome.later.take() else {
        return outcome;
    };
    let _phase = gpu::trace::phase_of(|| format!("grade: full cases of {}", outcome.file));
    let (puzzle, file) = (&req.puzzle, outcome.file.clone());
    let gpu = RefCell::new(gpu);
    let mut remote = |case: &Case, first_failure: bool| {
        let shrink = first_failure && !later.failed_before;
        crate::remote::call(
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
    let (results, diagnostics) = run_backend(
        puzzle,
        Backend::Gpu,
        &later.cases,
        &mut run,
        Some(&mut remote),
    );
    outcome.cases.retain(|r| !is_waiting(r));
    outcome.full_case = engine::quick_timing(&later.device, &later.cases, &results);
    outcome.cases.extend(results);
    let located = diagnostics
        .into_iter()
        .map(|d| engine::located(puzzle, &later.code, d));
    outcome.diagnostics.extend(located);
    dedup(&mut outcome.diagnostics);
    outcome.backend_agreement = agreement(&outcome.cases);
    outcome.passed = !outcome.cases.is_empty()
        && outcome.cases.iter().all(|r| r.passed)
        && outcome.diagnostics.is_empty();
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(case: &Case, passed: bool) -> CaseResult {
        CaseResult {
            passed,
            not_run: None,
            ..CaseResult::not_run(case, Backend::Gpu, String::new())
        }
    }

    #[test]
    fn only_the_full_cases_left_waiting_are_kept_for_later() {
        let puzzle = crate::registry::find("puzzle-04").expect("puzzle 04");
        let small = (puzzle.cases)(spec::Scale::Small);
        let device = Device {
            name: "test".into(),
            major: 9,
            minor: 0,
            multiprocessors: 132,
        };
        let (a, b) = (&small[0], &small[1]);
        let mut results = vec![result(a, true), waiting(b).0.0];
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
