//! The full-scale cases the GPU worker keeps (`gpu::resident`), from the checking side: the
//! request that runs and judges one case there, and the summary that comes back (the case's
//! result without its arrays, hundreds of megabytes; the diagnostics; the diff's text; the
//! shrunk case whole, it is small). The report and `--json` read it as they read a case judged
//! here. The worker's side, the judge it is lent, is `resident`.
use crate::judge::outcome::{Backend, CaseResult, Judged, Verdict};
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
    fn new(
        Verdict {
            result,
            diagnostics,
        }: Verdict,
    ) -> Wire {
        Wire {
            first_mismatch: result.first_mismatch,
            pitch: result.pitch,
            nhwc: result.nhwc,
            diff: result.diff.clone(),
            result,
            diagnostics,
        }
    }

    fn back(self) -> Verdict {
        let mut result = self.result;
        result.first_mismatch = self.first_mismatch;
        result.pitch = self.pitch;
        result.nhwc = self.nhwc;
        result.diff = self.diff;
        Verdict {
            result,
            diagnostics: self.diagnostics,
        }
    }
}

/// The summary of a full case: its result and, if it was cut smaller, the smallest that failed.
#[derive(Serialize, Deserialize)]
struct Summary {
    case: Wire,
    shrunk: Option<Wire>,
}

/// The worker's summary of a judged full case (the result's arrays left out by the caller).
pub fn summary(judged: Judged) -> serde_json::Value {
    let summary = Summary {
        case: Wire::new(judged.case),
        shrunk: judged.shrunk.map(Wire::new),
    };
    serde_json::to_value(summary).expect("a summary serializes")
}

/// Reads the worker's summary.
pub fn read(value: serde_json::Value) -> Result<Judged, serde_json::Error> {
    let s: Summary = serde_json::from_value(value)?;
    Ok(Judged {
        case: s.case.back(),
        shrunk: s.shrunk.map(Wire::back),
    })
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
        Some(Ok(mut judged)) => {
            // The summary's result leaves the flag behind (it is not part of the report).
            judged.case.result.context_lost = lost;
            judged
        }
        Some(Err(e)) => {
            let d = Diagnostic::new(
                spec::Kind::LaunchError,
                format!("bad summary from the GPU worker: {e}"),
            );
            let (result, diagnostics) =
                crate::judge::judge(puzzle, case, Backend::Gpu, RunOutput::failed(d));
            Judged::alone(result, diagnostics)
        }
        None => {
            let (result, diagnostics) =
                crate::judge::judge(puzzle, case, Backend::Gpu, reply.output);
            Judged::alone(result, diagnostics)
        }
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
