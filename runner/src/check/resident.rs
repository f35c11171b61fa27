//! The runner's half of the full-scale cases the GPU worker keeps (`gpu::resident`), on the
//! worker's side: what the worker is lent (the registry and this judge).
//!
//! The worker is this same binary, so it judges a full case with [`judge::judge`] itself, cuts a
//! wrong one to its smallest failing size as `check` does, and draws the diff the report would
//! draw; only a summary (`remote::summary`) goes back. Verdicts and messages are therefore the
//! same either way (`same_verdicts_and_messages_as_the_host_path` below checks it on every case).

use crate::check;
use crate::judge::judge_with;
use crate::judge::outcome::{Backend, Judged, Verdict};
use gpu::resident::{FullRun, Hooks};
use spec::{Case, Puzzle, RunOutput};

/// What the worker is lent.
pub const HOOKS: Hooks = Hooks {
    puzzle: |wire| {
        let (id, seed) = Puzzle::from_wire(wire);
        let puzzle = crate::workbook::registry::find(id).ok()?;
        Some(seed.map_or(puzzle, |s| puzzle.drawn(s)))
    },
    judge: judge_full,
};

/// Worker side: judges `out` on `case` as `check` would, and summarizes it.
fn judge_full(
    puzzle: &Puzzle,
    run: &FullRun,
    case: &mut Case,
    out: RunOutput,
) -> serde_json::Value {
    colored::control::set_override(run.color);
    let judging = gpu::trace::phase("judge");
    let (mut result, diagnostics) = judge_with(puzzle, case, Backend::Gpu, out, false);
    drop(judging);
    let mut on_gpu = |c: &Case| match check::with_declared_launch(puzzle, &run.code, &run.file, c) {
        Ok(own) => {
            let source = toolchain::nvrtc::Source {
                code: &run.code,
                file: &run.file,
                macros: &own.macros,
            };
            (gpu::execute(&source, &own.job), own)
        }
        Err(d) => (RunOutput::failed(d), c.clone()),
    };
    let shrinking = gpu::trace::phase("shrink");
    let shrunk = (run.shrink && crate::check::shrink::shrinkable(case, &result, &diagnostics))
        .then(|| crate::check::shrink::shrink_failure(puzzle, case, Backend::Gpu, &mut on_gpu))
        .flatten();
    drop(shrinking);
    // The diff reads the reference, lent for it.
    let diff = gpu::trace::phase("diff");
    result.expected = std::mem::take(&mut case.expected);
    result.diff = crate::judge::diff::diff_of(&result, &puzzle.tolerance);
    case.expected = std::mem::take(&mut result.expected);
    drop(diff);
    let _summary = gpu::trace::phase("summary");
    // The output's memory waits for the next full case's output (`gpu::scratch`).
    gpu::scratch::give(std::mem::take(&mut result.output));
    result.expected = vec![];
    crate::check::remote::summary(Judged {
        case: Verdict {
            result,
            diagnostics,
        },
        shrunk,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::remote::read;
    use crate::judge::judge;
    use crate::judge::outcome::CaseResult;
    use spec::Diagnostic;

    /// Outputs a kernel might give for `case`: the reference rounded to float, the same with a
    /// wrong and an unwritten element, and (2D) a changed padding element.
    fn outputs(case: &Case) -> Vec<Vec<f32>> {
        let right: Vec<f32> = case.expected.iter().map(|&e| e as f32).collect();
        let mut wrong = right.clone();
        let n = wrong.len();
        let image: Vec<usize> = (0..n)
            .filter(|&i| !case.job.output_pitch().is_some_and(|p| p.is_padding(i)))
            .collect();
        wrong[image[image.len() / 2]] += 3.0;
        wrong[image[image.len() - 1]] = f32::NAN;
        // Every image element wrong, the first half of them unwritten: more of each than the
        // judge keeps (`scan::KEPT`), so only the counts tell them.
        let mut most = right.clone();
        for (k, &i) in image.iter().enumerate() {
            most[i] = if k < image.len() / 2 {
                f32::NAN
            } else {
                most[i] + 2.5
            };
        }
        let mut all = vec![right, wrong, most];
        if let Some(p) = case.job.output_pitch().filter(|p| p.stride > p.cols) {
            let mut padded = all[0].clone();
            padded[p.cols] = 1.0;
            all.push(padded);
        }
        all
    }

    fn output_is_right(r: &CaseResult) -> bool {
        r.first_mismatch.is_none()
    }

    #[test]
    fn same_verdicts_and_messages_as_the_host_path() {
        colored::control::set_override(false);
        let mut compared = 0;
        for puzzle in crate::workbook::registry::all() {
            for case in (puzzle.cases)(spec::Scale::Small) {
                for output in outputs(&case) {
                    let (sent, output_len) = (output.clone(), output.len());
                    let out = RunOutput {
                        outputs: vec![output],
                        ..RunOutput::default()
                    };
                    let (host, host_diags) = judge(&puzzle, &case, Backend::Gpu, out.clone());
                    let run = FullRun {
                        code: String::new(),
                        file: "k.cu".into(),
                        puzzle: puzzle.id.into(),
                        case: case.name.clone(),
                        shrink: false,
                        color: false,
                        macros: vec![],
                    };
                    let mut case = case.clone();
                    let summary = judge_full(&puzzle, &run, &mut case, out);
                    let Judged {
                        case:
                            Verdict {
                                result: remote,
                                diagnostics: diags,
                            },
                        shrunk,
                    } = read(summary).expect("reads back");
                    assert!(shrunk.is_none());
                    let at = format!("{} {}", puzzle.id, case.name);
                    assert_eq!(remote.passed, host.passed, "{at}");
                    assert_eq!(remote.max_abs_err, host.max_abs_err, "{at}");
                    assert_eq!(remote.first_mismatch, host.first_mismatch, "{at}");
                    assert_eq!(remote.pitch, host.pitch, "{at}");
                    assert_eq!(diags, host_diags, "{at}");
                    assert!(!host.passed || output_is_right(&host), "{at}");
                    // Counted, not listed: the wrong and unwritten elements are all there.
                    let count = |kind: spec::Kind| {
                        diags.iter().find(|d| d.kind == kind).map(|d| {
                            let n = d.message.split(' ').next().unwrap_or_default();
                            n.parse::<usize>().unwrap_or(0)
                        })
                    };
                    let changed = |f: fn(&f32) -> bool| {
                        let image = (0..output_len)
                            .filter(|&i| !case.job.output_pitch().is_some_and(|p| p.is_padding(i)));
                        image.filter(|&i| f(&sent[i])).count()
                    };
                    if changed(|v| v.is_nan()) > 0 {
                        assert_eq!(
                            count(spec::Kind::UnwrittenOutput),
                            Some(changed(|v| v.is_nan())),
                            "{at}"
                        );
                    }
                    assert!(remote.output.is_empty() && remote.expected.is_empty());
                    let human = |r: CaseResult, d: Vec<Diagnostic>| {
                        let view = crate::report::View {
                            runner: "runner".into(),
                            rerun: None,
                        };
                        crate::report::human(&check::Outcome::of_gpu(puzzle.id, vec![r], d), &view)
                    };
                    assert_eq!(human(remote, diags), human(host, host_diags), "{at}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 300, "{compared}");
    }
}
