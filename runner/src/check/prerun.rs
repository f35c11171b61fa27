//! The simulator's small cases run side by side, on every core this machine has, before they are
//! judged one after another in their order.
//!
//! A check's simulator half is its slowest part on a machine without a GPU (puzzle 11's Hopper
//! solution: 1.5 s of `wgmma` arithmetic over its fourteen small cases, one after another). The
//! cases are independent, so [`prerun`] hands them to a few threads, each taking the next case in
//! order; `check::run_backend` then judges, shrinks and reports them exactly as before, taking
//! each run from here. After a case times out no thread starts another (the engine stops its
//! backend there): an endless loop still costs one limit, not one per case.

use spec::{Case, Kind, RunOutput};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The runs of `cases` by `run`, in their order; `None` for a case not run because one before it
/// timed out (or one that another thread had not reached).
pub fn prerun(
    cases: &[Case],
    run: &(dyn Fn(&Case) -> (RunOutput, Case) + Sync),
) -> Vec<Option<(RunOutput, Case)>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(cases.len());
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<Option<(RunOutput, Case)>>> =
        Mutex::new(cases.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= cases.len() || stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let ran = run(&cases[i]);
                    if ran.0.diagnostics.iter().any(|d| d.kind == Kind::Timeout) {
                        stop.store(true, Ordering::SeqCst);
                    }
                    done.lock().expect("no thread panics")[i] = Some(ran);
                }
            });
        }
    });
    done.into_inner().expect("no thread panics")
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::Diagnostic;

    fn case(name: &str) -> Case {
        let mut c =
            (crate::workbook::registry::find("puzzle-01").unwrap().cases)(spec::Scale::Small)
                .remove(0);
        c.name = name.into();
        c
    }

    #[test]
    fn runs_come_back_in_order_and_none_start_after_a_timeout() {
        let cases: Vec<Case> = (0..40).map(|i| case(&format!("c{i}"))).collect();
        let run = |c: &Case| {
            let mut out = RunOutput::default();
            if c.name == "c3" {
                out.diagnostics.push(Diagnostic::new(Kind::Timeout, "slow"));
            }
            (out, c.clone())
        };
        let runs = prerun(&cases, &run);
        assert_eq!(runs.len(), 40);
        for (i, r) in runs.iter().enumerate().take(4) {
            assert_eq!(
                r.as_ref().map(|(_, c)| c.name.clone()),
                Some(format!("c{i}"))
            );
        }
        let after = runs.iter().skip(4).filter(|r| r.is_some()).count();
        assert!(after < 8, "{after} cases ran after the timeout");
    }
}
