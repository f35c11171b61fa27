//! The full-scale cases the GPU worker keeps (`gpu::resident`), from the checking side: the
//! request that runs and judges one case there, and the summary that comes back (the case's
//! result without its arrays, hundreds of megabytes; the diagnostics; the diff's text; the
//! shrunk case whole, it is small). The report and `--json` read it as they read a case judged
//! here. The worker's side, the judge it is lent, is `resident`.
use crate::judge::outcome::{Backend, CaseResult};
use gpu::pool::Worker;
use gpu::resident::FullRun;
use gpu::worker;
use serde::{Deserialize, Serialize};
use spec::{Case, Diagnostic, Puzzle, RunOutput};
use std::cell::RefCell;
use std::time::Duration;

/// A judged case on the wire: the result's fields the report reads but `--json` leaves out travel
/// beside it.
#[derive(Serialize, Deserialize)]
struct Wire {
    result: CaseResult,
    first_mismatch: Option<usize>,
    pitch: Option<spec::job::Pitch>,
    nhwc: Option<[usize; 3]>,
    diff: Option<String>,
    diagnostics: Vec<Diagnostic>,
}

impl Wire {
    fn new(result: CaseResult, diagnostics: Vec<Diagnostic>) -> Wire {
        Wire {
            first_mismatch: result.first_mismatch,
            pitch: result.pitch,
            nhwc: result.nhwc,
            diff: result.diff.clone(),
            result,
            diagnostics,
        }
    }

    fn back(self) -> (CaseResult, Vec<Diagnostic>) {
        let mut result = self.result;
        result.first_mismatch = self.first_mismatch;
        result.pitch = self.pitch;
        result.nhwc = self.nhwc;
        result.diff = self.diff;
        (result, self.diagnostics)
    }
}

/// The summary of a full case: its result and, if it was cut smaller, the smallest that failed.
#[derive(Serialize, Deserialize)]
struct Summary {
    case: Wire,
    shrunk: Option<Wire>,
}

/// A judged full case as [`check`](crate::check) takes it: the result and its diagnostics, and the shrunk one.
pub type Judged = (
    (CaseResult, Vec<Diagnostic>),
    Option<(CaseResult, Vec<Diagnostic>)>,
);

/// The worker's summary of a judged full case (the result's arrays left out by the caller).
pub fn summary(
    case: (CaseResult, Vec<Diagnostic>),
    shrunk: Option<(CaseResult, Vec<Diagnostic>)>,
) -> serde_json::Value {
    let summary = Summary {
        case: Wire::new(case.0, case.1),
        shrunk: shrunk.map(|(r, d)| Wire::new(r, d)),
    };
    serde_json::to_value(summary).expect("a summary serializes")
}

/// Reads the worker's summary.
pub fn read(value: serde_json::Value) -> Result<Judged, String> {
    let s: Summary = serde_json::from_value(value).map_err(|e| e.to_string())?;
    Ok((s.case.back(), s.shrunk.map(Wire::back)))
}

/// Runs and judges full case `case` of `puzzle` in the GPU worker (`shrink`: cut it smaller
/// there if it is the first wrong one); only the judge's summary comes back.
pub fn call(
    gpu: &RefCell<&mut Worker>,
    puzzle: &Puzzle,
    code: &str,
    file: &str,
    case: &Case,
    shrink: bool,
    limit: Duration,
) -> Judged {
    let request = worker::Request::Full(FullRun {
        code: code.to_string(),
        file: file.to_string(),
        puzzle: puzzle.wire_id(),
        case: case.name.clone(),
        shrink,
        color: colored::control::SHOULD_COLORIZE.should_colorize(),
        macros: case.macros.clone(),
    });
    let reply = gpu.borrow_mut().call(&request, limit);
    let lost = reply.output.context_lost;
    match reply.judged.map(read) {
        Some(Ok(((mut result, diagnostics), shrunk))) => {
            // The summary's result leaves the flag behind (it is not part of the report).
            result.context_lost = lost;
            ((result, diagnostics), shrunk)
        }
        Some(Err(e)) => {
            let d = Diagnostic::new(
                spec::Kind::LaunchError,
                format!("bad summary from the GPU worker: {e}"),
            );
            (
                crate::judge::judge(puzzle, case, Backend::Gpu, RunOutput::failed(d)),
                None,
            )
        }
        None => (
            crate::judge::judge(puzzle, case, Backend::Gpu, reply.output),
            None,
        ),
    }
}

/// The full-scale cases of `puzzle` as the GPU worker keeps them (none where it has none).
pub fn full_cases(puzzle: &Puzzle, gpu: &mut Worker) -> Vec<Case> {
    // The first check builds them (and, on a new machine, their references): minutes at most.
    let reply = gpu.call(
        &worker::Request::Describe(puzzle.wire_id()),
        Duration::from_secs(900),
    );
    reply
        .stubs
        .into_iter()
        .map(gpu::resident::case_of)
        .collect()
}
