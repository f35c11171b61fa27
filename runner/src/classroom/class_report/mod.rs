//! The class report of `runner grade`: `report.html` beside grade.csv, and the same aggregates in
//! grade.json under `report` (the schema: `graders/grade.schema.json`).
//!
//! Three stages, each its own module, so that grading, aggregating and drawing change apart:
//! - [`facts`]: what the report needs of each submission, taken from `grade`'s outcomes before
//!   they are turned into rows: its text, every diagnostic with its line, and, for a budget
//!   refusal, what was counted against what was allowed (from the failing case's counts and its
//!   budget, not from the message's words), and `profile`'s predicted time for one that passed
//!   without a GPU, made while grading ([`Predictor`]). [`write`] adds each row's cases and
//!   measured time, and takes the predicted times where nothing was measured (`speed`).
//! - `aggregate`: the class's aggregates, pure, from those facts: the pass rate and the cases
//!   passed, the diagnostic kinds and the lesson's steps where their lines fall (`steps`), the
//!   lessons skipped, the times, and what the instructor should look at (refusals, timeouts,
//!   identical files).
//! - `render`: the page, one self-contained HTML file with its CSS and its charts (`chart`,
//!   inline SVG) in it: nothing is fetched, no script runs.

pub mod aggregate;
mod chart;
pub mod render;
mod speed;
pub mod steps;

use crate::check::Outcome;
use crate::classroom::row::Row;
pub use aggregate::{Class, Context, aggregate};
use anyhow::Context as _;
use serde::Serialize;
use spec::job::AccessStats;
use spec::{Budget, Diagnostic, Kind, Puzzle, Scale};
pub use speed::Predictor;
use std::path::{Path, PathBuf};

/// What the report knows of one submission.
#[derive(Clone, Debug, Default)]
pub struct Submitted {
    /// Its name in the table (its path relative to the class's folder).
    pub file: String,
    /// Its path as diagnostics name it (`workbook::display`).
    pub shown_as: String,
    /// Its text; `None` when it could not be read.
    pub text: Option<String>,
    pub passed: bool,
    pub cases_passed: usize,
    pub cases_total: usize,
    /// Every diagnostic, with its line.
    pub diagnostics: Vec<Diagnostic>,
    /// Why it was not checked at all (it could not be read), if it was not.
    pub refused: Option<String>,
    /// Its budget refusal, if it had one.
    pub overrun: Option<Overrun>,
    /// Its time on the full case, measured or predicted, where it passed.
    pub seconds: Option<f64>,
    /// `profile`'s predicted time, made while grading, where it passed without a GPU.
    pub predicted: Option<f64>,
}

impl Submitted {
    /// Whether a diagnostic naming `file` names this submission, not a header it includes (a
    /// diagnostic without a file is the kernel's own). By the file's name: a compile cached
    /// from another folder names the file as it was shown then.
    pub fn owns(&self, file: Option<&str>) -> bool {
        let name = |p: &str| Path::new(p).file_name().map(|n| n.to_os_string());
        file.is_none_or(|f| f == self.shown_as || name(f) == name(&self.shown_as))
    }
}

/// A budget refusal: a lesson skipped.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overrun {
    pub file: String,
    /// The case it was refused in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// What the budget counts ("global reads by one thread").
    pub what: String,
    /// The count, and the budget's allowance, in `what`'s unit (`None` where the case's counts
    /// did not come back).
    pub counted: Option<f64>,
    pub allowed: Option<f64>,
    pub message: String,
}

/// What the report needs of `grade`'s outcomes of `files` and their predicted times (in the
/// same order), taken before they become rows ([`write`] names each after its row).
pub fn facts(
    puzzle: &Puzzle,
    files: &[PathBuf],
    graded: &[anyhow::Result<Outcome>],
    predicted: &[Option<f64>],
) -> Vec<Submitted> {
    let small = (puzzle.cases)(Scale::Small);
    let budget_of = |case: &str| {
        let case = small.iter().find(|c| c.name == case);
        case.and_then(|c| c.job.budget).or(puzzle.budget)
    };
    files
        .iter()
        .zip(graded)
        .zip(predicted)
        .map(|((path, graded), &predicted)| {
            let shown_as = crate::workbook::display(path);
            let text = crate::workbook::source_text::read(path, &shown_as)
                .ok()
                .map(|t| t.0);
            let mut s = Submitted {
                shown_as,
                text,
                predicted,
                ..Submitted::default()
            };
            match graded {
                Ok(outcome) => {
                    s.diagnostics = outcome.diagnostics.clone();
                    s.overrun = overrun(outcome, &budget_of);
                }
                Err(e) => s.refused = Some(format!("{e:#}")),
            }
            s
        })
        .collect()
}

/// The budget refusal of `outcome`, with the count that broke it: the failing case's counts
/// (`AccessStats`) against its budget.
fn overrun(outcome: &Outcome, budget_of: &dyn Fn(&str) -> Option<Budget>) -> Option<Overrun> {
    let d = (outcome.diagnostics.iter()).find(|d| d.kind == Kind::BudgetExceeded)?;
    let counts = d.case.as_deref().and_then(|name| {
        let case = outcome.cases.iter().find(|c| c.name == name)?;
        over(case.stats?, budget_of(name)?)
    });
    let (what, counted, allowed) = match counts {
        Some((what, counted, allowed)) => (what.to_string(), Some(counted), Some(allowed)),
        None => ("the puzzle's budget".to_string(), None, None),
    };
    Some(Overrun {
        file: String::new(),
        case: d.case.clone(),
        what,
        counted,
        allowed,
        message: d.message.clone(),
    })
}

/// The first count of `stats` over `budget`: what, counted, allowed.
pub fn over(stats: AccessStats, budget: Budget) -> Option<(&'static str, f64, f64)> {
    let limited = |n: u32| n != Budget::NO_LIMIT;
    if limited(budget.reads) && stats.max_reads > budget.reads {
        return Some((
            "global reads by one thread",
            f64::from(stats.max_reads),
            f64::from(budget.reads),
        ));
    }
    if limited(budget.writes) && stats.max_writes > budget.writes {
        return Some((
            "global writes by one thread",
            f64::from(stats.max_writes),
            f64::from(budget.writes),
        ));
    }
    if let (Some(t), Some((most, tile))) = (budget.tile_reads, stats.tile_reads)
        && most > tile + u64::from(t.slack)
    {
        return Some((
            "input elements read by one block",
            most as f64,
            (tile + u64::from(t.slack)) as f64,
        ));
    }
    if let Some(n) = stats.unread_reads.filter(|&n| n > 0) {
        return Some(("reads of the kernel from global memory", n as f64, 0.0));
    }
    if let (Some(n), Some(limit)) = (
        stats.cuda_products_per_output,
        budget.cuda_products_per_output,
    ) && n > limit
    {
        return Some((
            "products on the CUDA cores per output",
            f64::from(n),
            f64::from(limit),
        ));
    }
    if let (Some((r, f)), Some((lr, lf))) =
        (stats.shared_reads_products, budget.shared_reads_per_product)
    {
        let (made, allowed) = (
            r as f64 / f.max(1) as f64,
            f64::from(lr) / f64::from(lf.max(1)),
        );
        if made > allowed {
            return Some(("shared reads per product", made, allowed));
        }
    }
    if let Some((reads, allowed, outputs)) = stats.staged_reads
        && reads > allowed
    {
        let per = |n: u64| n as f64 / outputs.max(1) as f64;
        return Some(("input reads per output", per(reads), per(allowed)));
    }
    // The sim's rule is finer (what the CUDA cores may do of it is left out); this names the
    // shortfall with the multiply-adds the convolution needs.
    if let Some((done, needed)) = stats.tensor_macs
        && budget.tensor_macs != 0
        && done < needed
    {
        return Some((
            "multiply-adds on the tensor cores",
            done as f64,
            needed as f64,
        ));
    }
    None
}

/// The report of one puzzle's class: each row's grade joined to its facts, the times
/// `predictor` predicted while grading taken where none was measured, aggregated; `report.html`
/// written into `out_dir`. The aggregates, for grade.json.
pub fn write(
    out_dir: &Path,
    puzzle: &Puzzle,
    mut facts: Vec<Submitted>,
    rows: &[Row],
    skipped: &[(String, String)],
    predictor: &Predictor,
) -> anyhow::Result<Class> {
    for (s, row) in facts.iter_mut().zip(rows) {
        s.file = row.file.clone();
        if let Some(o) = &mut s.overrun {
            o.file = row.file.clone();
        }
        s.passed = row.passed;
        s.cases_passed = row.cases_passed;
        s.cases_total = row.cases_total;
        s.seconds = row.bench_seconds;
    }
    let predicting = gpu::trace::phase("grade: the report's times (predicted where not measured)");
    let frame = speed::times(puzzle, &mut facts, predictor);
    drop(predicting);
    let _report = gpu::trace::phase("grade: aggregate and write report.html");
    let root = crate::workbook::root();
    let cx = Context {
        puzzle: puzzle.id.into(),
        title: puzzle.title.into(),
        skeleton: std::fs::read_to_string(root.join(puzzle.kernel_path())).unwrap_or_default(),
        skipped: skipped.to_vec(),
        speed: frame,
    };
    let class = aggregate(&facts, &cx);
    let path = out_dir.join("report.html");
    std::fs::write(&path, render::page(std::slice::from_ref(&class)))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(class)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A class of `n` synthetic submissions: a third pass, the rest fail with a race, a budget
    /// refusal or an uninitialized read at lines of their own, each kernel written with its own
    /// names and comments.
    fn class(n: usize) -> Vec<Submitted> {
        (0..n)
            .map(|i| {
                let text = format!(
                    "// student {i}\nextern \"C\" __global__ void conv1d(const float* in{i}, const float* k, float* out{i}, int n, int m)\n{{\n    extern __shared__ float t{i}[];\n    t{i}[threadIdx.x] = in{i}[blockIdx.x * {i} + threadIdx.x];\n    __syncthreads();\n    float s = 0.0f;\n    for (int j = 0; j < m; j++) s += t{i}[threadIdx.x + j] * k[j];\n    out{i}[blockIdx.x * {i} + threadIdx.x] = s;\n}}\n"
                );
                let (kind, line) = match i % 3 {
                    0 => (None, 0),
                    1 => (Some(Kind::Race), 8),
                    _ => (Some(Kind::BudgetExceeded), 5),
                };
                let diagnostics = kind
                    .map(|k| Diagnostic::new(k, format!("student {i}")).at_line(format!("s{i}.cu"), line))
                    .into_iter()
                    .collect();
                Submitted {
                    file: format!("s{i}.cu"),
                    shown_as: format!("class/s{i}.cu"),
                    text: Some(text),
                    passed: kind.is_none(),
                    cases_passed: if kind.is_none() { 12 } else { i % 12 },
                    cases_total: 12,
                    diagnostics,
                    overrun: (kind == Some(Kind::BudgetExceeded)).then(|| Overrun {
                        file: format!("s{i}.cu"),
                        case: Some("random-1".into()),
                        what: "global reads by one thread".into(),
                        counted: Some(74.0),
                        allowed: Some(52.0),
                        message: "over".into(),
                    }),
                    seconds: kind.is_none().then(|| 1e-4 * (1.0 + i as f64 / n as f64)),
                    predicted: None,
                    refused: None,
                }
            })
            .collect()
    }

    /// What `grade` adds to grading a class of 200: aggregating and drawing its report. The
    /// time is printed (`--nocapture`), not asserted (a shared machine's clock is no test); the
    /// work is bounded instead: every submission placed once per figure, and the page linear in
    /// the class (under 4 KiB a submission).
    #[test]
    fn a_class_of_200_aggregates_and_renders() {
        let subs = class(200);
        let cx = Context {
            puzzle: "puzzle-04".into(),
            title: "Tiles of any size".into(),
            skeleton: "// ANCHOR: solve\n// Your code here: load the block's tile, wait, then sum.\n// ANCHOR_END: solve\n".into(),
            skipped: vec![],
            speed: Some(aggregate::SpeedFrame {
                measured: false,
                on: "the model".into(),
                reference_seconds: Some(1.2e-4),
                floor: None,
            }),
        };
        let start = std::time::Instant::now();
        let class = aggregate(&subs, &cx);
        let page = render::page(std::slice::from_ref(&class));
        println!(
            "a class of 200: aggregated and rendered in {:.1} ms, a page of {} KiB",
            start.elapsed().as_secs_f64() * 1e3,
            page.len() / 1024
        );
        assert_eq!(class.passed, 67);
        let binned: usize = class.cases_passed.iter().map(|b| b.files.len()).sum();
        assert_eq!(binned, 200);
        let race = &class
            .misconceptions
            .iter()
            .find(|m| m.kind == "race")
            .unwrap();
        assert_eq!(race.files.len(), 67);
        // Every student's own names, one step: the sum (line 8) and the tile load (line 5).
        assert_eq!(race.steps.len(), 1);
        assert_eq!(race.steps[0].step, steps::Step::Sum);
        let budget = &class
            .misconceptions
            .iter()
            .find(|m| m.kind == "budget_exceeded")
            .unwrap();
        assert_eq!(budget.steps[0].step, steps::Step::Tile);
        assert_eq!(
            budget.steps[0].skeleton.as_deref(),
            Some("load the block's tile")
        );
        assert_eq!(class.lessons_skipped.len(), 66);
        let timed: usize = (class.speed.as_ref().unwrap().bins.iter())
            .map(|b| b.files.len())
            .sum();
        assert_eq!(timed, 67);
        assert!(class.attention.identical.is_empty());
        for i in 0..200 {
            assert!(page.contains(&format!("id=\"puzzle-04-row-{i}\"")));
        }
        assert!(page.len() < 200 * 4096, "{} bytes", page.len());
    }

    #[test]
    fn a_budget_refusal_is_counted_against_its_allowance() {
        let budget = Budget {
            reads: 52,
            writes: 1,
            ..Budget::NONE
        };
        let stats = AccessStats {
            max_reads: 74,
            max_writes: 1,
            ..AccessStats::default()
        };
        assert_eq!(
            over(stats, budget),
            Some(("global reads by one thread", 74.0, 52.0))
        );
        let within = AccessStats {
            max_reads: 52,
            ..stats
        };
        assert_eq!(over(within, budget), None);
        let shared = Budget {
            shared_reads_per_product: Some((5, 6)),
            ..Budget::NONE
        };
        let made = AccessStats {
            shared_reads_products: Some((8, 8)),
            ..AccessStats::default()
        };
        let (what, counted, allowed) = over(made, shared).unwrap();
        assert_eq!((what, counted), ("shared reads per product", 1.0));
        assert!((allowed - 5.0 / 6.0).abs() < 1e-12);
        let tile = Budget {
            tile_reads: Some(spec::TileReads {
                buf: 0,
                tile: 130,
                slack: 6,
                unread: None,
            }),
            ..Budget::NONE
        };
        let read = AccessStats {
            tile_reads: Some((384, 130)),
            ..AccessStats::default()
        };
        assert_eq!(
            over(read, tile),
            Some(("input elements read by one block", 384.0, 136.0))
        );
    }
}
