//! One backend's cases in order, and when it stops early.
//!
//! Each case is run and judged in turn; the first wrong one is cut to its smallest failing size.
//! A backend stops after a timeout (an endless loop would only time out again), and the GPU also
//! after a trap, a failed `assert` or any other fault that leaves the CUDA context unusable (an
//! illegal address, a stack overflow): the driver takes a few tenths of a second to report a trap
//! (0.35 to 0.8 s measured on an H200), the context is unusable after it, so each further case
//! costs a fresh worker, a fault on a GPU busy with another client's long kernel waits for that
//! kernel, and in `grade` a fault can hold up every other submission's launches for seconds
//! (`bench/RESULTS.md`). The simulator, where a trap costs nothing, runs every
//! case, so `auto` still names each case that traps. The cases not run are named in the
//! diagnostic's message and listed as failed cases with their reason, so the total stays the
//! puzzle's.

use crate::judge::judge;
use crate::judge::outcome::{Backend, CaseResult, Finding, Judged, NotRun, Verdict, fold};
use spec::{Case, Diagnostic, Kind, Puzzle, RunOutput, Scale};

/// Runs and judges a full case in the GPU worker (the bool: whether to cut it smaller).
pub type Remote<'a> = &'a mut dyn FnMut(&Case, bool) -> Judged;

/// Runs `cases` on one backend, in order: judges each, cuts the first wrong one to its smallest
/// failing size, and stops after a case that [`ends_the_run`], naming the cases it did not run
/// in that diagnostic's message and listing each as a failed case.
pub fn run_backend(
    puzzle: &Puzzle,
    backend: Backend,
    cases: &[Case],
    run: &mut dyn FnMut(&Case) -> (RunOutput, Case),
    mut remote: Option<Remote<'_>>,
) -> (Vec<CaseResult>, Vec<Diagnostic>) {
    let mut results: Vec<CaseResult> = vec![];
    let mut diagnostics = vec![];
    for (n, case) in cases.iter().enumerate() {
        // Shrink the first wrong case only: one small failure is enough to read.
        let first_failure = !results.iter().any(|r| !r.passed);
        let Judged {
            case:
                Verdict {
                    mut result,
                    diagnostics: mut diags,
                },
            shrunk,
        } = match remote.as_mut() {
            // Judged where it ran, and cut smaller there (`remote`).
            Some(remote) if case.scale == Scale::Full => remote(case, first_failure),
            _ => {
                // Judged against the case as it ran: with the launch the kernel declares, if
                // it does.
                let (out, ran) = run(case);
                let (result, diags) = judge(puzzle, &ran, backend, out);
                let smaller = (first_failure
                    && crate::check::shrink::shrinkable(case, &result, &diags))
                .then(|| crate::check::shrink::shrink_failure(puzzle, case, backend, run))
                .flatten();
                Judged {
                    case: Verdict {
                        result,
                        diagnostics: diags,
                    },
                    shrunk: smaller,
                }
            }
        };
        result.findings = diags.iter().map(Finding::of).collect();
        let lost = result.context_lost;
        results.push(result);
        if let Some(Verdict {
            result: smaller,
            diagnostics: more,
        }) = shrunk
        {
            diags.extend(more);
            let shrunk_from = Some(case.name.clone());
            results.push(CaseResult {
                shrunk_from,
                ..smaller
            });
        }
        let rest = &cases[n + 1..];
        let stop = ends_the_run(backend, lost, &diags);
        if let (Some(i), false) = (stop, rest.is_empty()) {
            let d = &mut diags[i];
            let names: Vec<String> = rest.iter().map(|c| c.name.clone()).collect();
            d.message += &format!(
                " (not run on the {} after it: {})",
                backend.name(),
                fold(&names, 3)
            );
            let what = match d.kind {
                Kind::Timeout => "timed out",
                Kind::Trap => "trapped",
                _ => "faulted",
            };
            let why = format!("case {} {what} before it", case.name);
            diagnostics.extend(diags.into_iter().map(|d| in_case(d, &case.name)));
            results.extend(
                rest.iter()
                    .map(|c| CaseResult::not_run(c, backend, NotRun::After(why.clone()))),
            );
            break;
        }
        diagnostics.extend(diags.into_iter().map(|d| in_case(d, &case.name)));
    }
    (results, diagnostics)
}

/// The diagnostic after which `backend` runs no more cases, if one of a case's `diags` is such:
/// a timeout on either backend; on the GPU, a trap (a `__trap()` or a failed `assert`), or any
/// fault that left the CUDA context unusable (`lost`: an illegal address, a stack overflow, a
/// worker that died), named by its launch error where it has one.
pub fn ends_the_run(backend: Backend, lost: bool, diags: &[Diagnostic]) -> Option<usize> {
    let last = |kind: Kind| diags.iter().rposition(|d| d.kind == kind);
    let on_gpu = backend == Backend::Gpu;
    let fault = || {
        last(Kind::Trap)
            .or_else(|| last(Kind::LaunchError).filter(|_| lost))
            .or_else(|| diags.len().checked_sub(1).filter(|_| lost))
    };
    last(Kind::Timeout).or_else(|| fault().filter(|_| on_gpu))
}

/// A full-scale case that timed out on the GPU after the kernel printed in its earlier cases:
/// the timeout's message says that `printf` alone can take that long (the threads that print
/// take turns: on an H100, puzzle 04's 1,500,000 lines, one per output, ran past the 10 s limit),
/// where it would otherwise send the learner looking for an endless loop. `results`: the
/// check's results so far (the GPU's are read), `cases`: the cases run (the full ones among them).
pub fn explain_printing_timeout<'a>(
    diagnostics: &mut [Diagnostic],
    results: impl IntoIterator<Item = &'a CaseResult>,
    cases: &[Case],
) {
    let printed = (results.into_iter()).any(|r| r.backend == Backend::Gpu && r.printed_anything());
    let full = |name: &str| {
        cases
            .iter()
            .any(|c| c.name == name && c.scale == Scale::Full)
    };
    for d in diagnostics.iter_mut() {
        if printed && d.kind == Kind::Timeout && d.case.as_deref().is_some_and(full) {
            d.message += ". Your kernel printed in the cases before it: printf makes the threads \
                          that print take turns, so a line from every thread of a full-scale case \
                          can take longer than the limit by itself; print from one thread, or \
                          remove the printf";
        }
    }
}

fn in_case(mut d: Diagnostic, case: &str) -> Diagnostic {
    d.case = Some(case.to_string());
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs puzzle 04's small cases on `backend` where every case from the third on traps, and
    /// returns the results, the diagnostics and how many cases were run.
    fn trapping_from_the_third(backend: Backend) -> (Vec<CaseResult>, Vec<Diagnostic>, usize) {
        let trap = Diagnostic::new(Kind::Trap, "the kernel executed `__trap()`");
        failing_from_the_third(backend, RunOutput::failed(trap))
    }

    /// Runs puzzle 04's small cases on `backend` where every case from the third on gives
    /// `failure`, and returns the results, the diagnostics and how many cases were run.
    fn failing_from_the_third(
        backend: Backend,
        failure: RunOutput,
    ) -> (Vec<CaseResult>, Vec<Diagnostic>, usize) {
        let puzzle = crate::workbook::registry::find("puzzle-04").expect("puzzle 04");
        let cases = (puzzle.cases)(Scale::Small);
        let mut ran = 0;
        let mut run = |case: &Case| {
            ran += 1;
            let out = if ran >= 3 {
                failure.clone()
            } else {
                let right = case.expected.iter().map(|&e| e as f32).collect();
                RunOutput {
                    outputs: vec![right],
                    ..RunOutput::default()
                }
            };
            (out, case.clone())
        };
        let (results, diags) = run_backend(&puzzle, backend, &cases, &mut run, None);
        assert_eq!(results.len(), cases.len(), "every case is listed");
        (results, diags, ran)
    }

    #[test]
    fn the_gpu_runs_no_case_after_a_trap() {
        let (results, diags, ran) = trapping_from_the_third(Backend::Gpu);
        assert_eq!(ran, 3, "two passing cases, then the trap, then none");
        assert!(results[..2].iter().all(|r| r.passed));
        let not_run: Vec<&CaseResult> = results.iter().filter(|r| r.not_run.is_some()).collect();
        assert_eq!(not_run.len(), results.len() - 3);
        assert!(not_run.iter().all(|r| !r.passed));
        let why = not_run[0].not_run.as_ref().map(NotRun::why).unwrap();
        assert!(
            why.contains(&format!("case {} trapped", results[2].name)),
            "{why}"
        );
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].kind, Kind::Trap);
        assert!(
            diags[0].message.contains("not run on the gpu after it: "),
            "{diags:?}"
        );
    }

    #[test]
    fn the_simulator_runs_every_case_after_a_trap() {
        let (results, diags, ran) = trapping_from_the_third(Backend::Sim);
        assert_eq!(ran, results.len());
        assert!(results.iter().all(|r| r.not_run.is_none()));
        assert_eq!(
            diags.len(),
            results.len() - 2,
            "one trap per case from the third"
        );
    }

    #[test]
    fn a_timeout_ends_a_run_on_either_backend() {
        let timeout = Diagnostic::new(Kind::Timeout, "did not finish");
        let trap = Diagnostic::new(Kind::Trap, "trapped");
        for backend in [Backend::Sim, Backend::Gpu] {
            assert_eq!(
                ends_the_run(backend, false, &[trap.clone(), timeout.clone()]),
                Some(1)
            );
        }
        assert_eq!(
            ends_the_run(Backend::Sim, false, std::slice::from_ref(&trap)),
            None
        );
        assert_eq!(ends_the_run(Backend::Gpu, false, &[trap]), Some(0));
    }

    /// A full-scale case that timed out after the kernel printed in the small cases is explained
    /// by the printing; a small case's timeout, or one of a kernel that never printed, is not.
    #[test]
    fn a_full_case_timing_out_after_printing_names_the_printf() {
        let puzzle = crate::workbook::registry::find("puzzle-04").expect("puzzle 04");
        let small = (puzzle.cases)(Scale::Small);
        let full = Case {
            name: "full".into(),
            scale: Scale::Full,
            ..small[0].clone()
        };
        let cases = [small[0].clone(), full];
        let mut printing =
            CaseResult::not_run(&cases[0], Backend::Gpu, NotRun::After(String::new()));
        printing.printed = vec![spec::job::Printed {
            block: None,
            thread: None,
            text: "output 0 = 1.0".into(),
        }];
        let timeout = |case: &str| in_case(Diagnostic::new(Kind::Timeout, "did not finish"), case);
        let mut diags = [timeout("full"), timeout(&cases[0].name)];
        explain_printing_timeout(&mut diags, std::slice::from_ref(&printing), &cases);
        assert!(
            diags[0].message.contains("printf makes the threads"),
            "{diags:?}"
        );
        assert_eq!(diags[1].message, "did not finish", "a small case's timeout");
        let quiet = CaseResult::not_run(&cases[0], Backend::Gpu, NotRun::After(String::new()));
        let mut diags = [timeout("full")];
        explain_printing_timeout(&mut diags, &[quiet], &cases);
        assert_eq!(diags[0].message, "did not finish", "nothing was printed");
    }

    /// An illegal address (or a stack overflow, which the GPU reports as one) ends the worker's
    /// CUDA context: the GPU runs no case after it, as after a trap. A launch the driver refused
    /// without harm to the context (a shape it cannot run) does not end the run.
    #[test]
    fn the_gpu_runs_no_case_after_a_fault_that_ended_its_context() {
        let illegal = Diagnostic::new(
            Kind::LaunchError,
            "the kernel read or wrote memory outside every buffer (CUDA_ERROR_ILLEGAL_ADDRESS)",
        );
        let fault = RunOutput {
            context_lost: true,
            ..RunOutput::failed(illegal.clone())
        };
        let (results, diags, ran) = failing_from_the_third(Backend::Gpu, fault);
        assert_eq!(ran, 3, "two passing cases, then the fault, then none");
        let why = results[3]
            .not_run
            .as_ref()
            .map(NotRun::why)
            .expect("the fourth case did not run");
        assert!(
            why.contains(&format!("case {} faulted", results[2].name)),
            "{why}"
        );
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(diags[0].message.contains("not run on the gpu after it: "));
        let refused = RunOutput::failed(Diagnostic::new(
            Kind::LaunchError,
            "the launch shape or the shared memory size is not valid for this device",
        ));
        let (results, _, ran) = failing_from_the_third(Backend::Gpu, refused);
        assert_eq!(
            ran,
            results.len(),
            "a refused launch leaves the context working"
        );
        assert_eq!(
            ends_the_run(Backend::Sim, true, std::slice::from_ref(&illegal)),
            None,
            "the simulator has no context to lose"
        );
    }
}
