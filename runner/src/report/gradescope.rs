//! Gradescope's autograder `results.json`, from an [`Outcome`].
//!
//! The format is Gradescope's "Autograder Specifications" page
//! (gradescope-autograders.readthedocs.io/en/latest/specs/): a top-level `score`, optional
//! `output` and `visibility`, and `tests`, each with `score`, `max_score`, `status` ("passed" or
//! "failed"), `name`, `output` and `visibility` ("hidden", "after_due_date", "after_published"
//! or "visible"). One test per case of the puzzle (a case passes when every backend that ran it
//! passed it, with no diagnostic), each worth an equal share of the puzzle's points; a file that
//! never reached its cases (it does not compile, say) is one failed test worth them all. The
//! submission-wide `output` is the report a student would read from `runner check`. Where fresh
//! cases were drawn (`runner grade`), a published case and its fresh twin (`fresh-<case>`: the
//! same sizes, new data) are one test, passed only when both pass: a table of the published
//! outputs earns nothing. The seed goes in `extra_data`, which Gradescope keeps from students.
//! A kernel over the puzzle's budget (`budget_exceeded`: the technique the puzzle teaches is
//! missing, such as the tile of puzzle 04 or the tensor cores of puzzle 11) scores nothing, on
//! any case: its right numbers on the small cases are not the puzzle's answer.
//!
//! Writing into a file that already holds results adds to it (tests appended, scores summed), so
//! an autograder grades several puzzles of one submission into one `results.json`.

use crate::judge::outcome::Outcome;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Who sees a test's result, and when (Gradescope's four settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Visibility {
    Visible,
    Hidden,
    AfterDueDate,
    AfterPublished,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Test {
    pub score: f64,
    pub max_score: f64,
    pub status: Status,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    pub visibility: Visibility,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    pub score: f64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    pub tests: Vec<Test>,
    /// Who sees the submission-wide output: with anything but `visible`, the report goes into
    /// a test of no points that carries the same visibility, and the top-level output says only
    /// that results are held back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// For the instructor, never shown to a student (Gradescope keeps it): the seed a grade drew
    /// its fresh cases from, and the protection the compile ran under.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra_data: serde_json::Map<String, serde_json::Value>,
}

/// `points` shared among `n` tests in whole hundredths, the first ones a hundredth more where
/// they do not divide evenly: each share has two decimals and they sum to `points` (rounded).
pub fn shares(points: f64, n: usize) -> Vec<f64> {
    let cents = (points * 100.0).round().max(0.0) as u64;
    let n = n.max(1) as u64;
    (0..n)
        .map(|i| (cents / n + u64::from(i < cents % n)) as f64 / 100.0)
        .collect()
}

/// A score as Gradescope shows it: rounded to two decimals (10/3 points a case would otherwise
/// sum to 9.999999999999998).
pub fn rounded(score: f64) -> f64 {
    (score * 100.0).round() / 100.0
}

/// The results of one puzzle's check: `points` shared among its cases. `report` is the text a
/// student reads (the check's report without color).
pub fn results(outcome: &Outcome, report: &str, points: f64, visibility: Visibility) -> Results {
    let test = |name: String, passed: bool, share: f64, output: String| Test {
        score: if passed { share } else { 0.0 },
        max_score: share,
        status: if passed {
            Status::Passed
        } else {
            Status::Failed
        },
        name,
        output,
        visibility,
    };
    let mut names: Vec<&str> = vec![];
    for c in outcome.cases.iter().filter(|c| c.shrunk_from.is_none()) {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    let over_budget = outcome
        .diagnostics
        .iter()
        .find(|d| d.kind == spec::Kind::BudgetExceeded)
        .map(|d| format!("no case counts: budget_exceeded: {}", d.message));
    // A fresh twin counts with its published case.
    let test_of = |name: &str| -> String {
        match name.strip_prefix(spec::FRESH) {
            Some(base) if names.contains(&base) => base.to_string(),
            _ => name.to_string(),
        }
    };
    let mut tests_named: Vec<String> = vec![];
    for name in &names {
        let t = test_of(name);
        if !tests_named.contains(&t) {
            tests_named.push(t);
        }
    }
    if names.is_empty() {
        let why = outcome
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.kind.name(), d.message))
            .collect::<Vec<_>>()
            .join("\n");
        let mut results = failed(&outcome.puzzle, "builds and runs", &why, points, visibility);
        results.output = report.to_string();
        return results;
    }
    let tests: Vec<Test> = {
        let shares = shares(points, tests_named.len());
        tests_named
            .iter()
            .zip(shares)
            .map(|(name, share)| {
                let runs: Vec<_> = outcome
                    .cases
                    .iter()
                    .filter(|c| c.shrunk_from.is_none() && test_of(&c.name) == *name)
                    .collect();
                let passed = runs.iter().all(|c| c.passed) && over_budget.is_none();
                let mut lines: Vec<String> = over_budget.iter().map(|m| m.to_string()).collect();
                for c in runs.iter().filter(|c| !c.passed) {
                    let fresh = if c.name == *name {
                        String::new()
                    } else {
                        " (its sizes, with data drawn fresh for this grade)".to_string()
                    };
                    lines.push(format!("failed on the {}{fresh}", c.backend.name()));
                    lines.extend(c.findings.iter().map(|f| format!("  {f}")));
                }
                test(
                    format!("{}: case {name}", outcome.puzzle),
                    passed,
                    share,
                    lines.join("\n"),
                )
            })
            .collect()
    };
    Results {
        score: rounded(tests.iter().map(|t| t.score).sum()),
        output: report.to_string(),
        tests,
        visibility: None,
        extra_data: Default::default(),
    }
}

/// One failed test worth all of the puzzle's `points`: what a file that never reached its cases
/// scores.
pub fn failed(puzzle: &str, what: &str, why: &str, points: f64, visibility: Visibility) -> Results {
    Results {
        score: 0.0,
        output: String::new(),
        visibility: None,
        extra_data: Default::default(),
        tests: vec![Test {
            score: 0.0,
            max_score: points,
            status: Status::Failed,
            name: format!("{puzzle}: {what}"),
            output: why.to_string(),
            visibility,
        }],
    }
}

/// The top-level output of results held back (a visibility other than `visible`).
pub const HELD_BACK: &str = "Your results are held back until your instructor releases them.\n";

/// Writes `results` to `path`, added to what a results file there already holds.
pub fn write(path: &Path, results: Results) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut all = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<Results>(&text).ok())
        .unwrap_or(Results {
            score: 0.0,
            output: String::new(),
            tests: vec![],
            visibility: None,
            extra_data: Default::default(),
        });
    let first = results.tests.first();
    let hidden = first
        .map(|t| t.visibility)
        .filter(|v| *v != Visibility::Visible);
    let puzzle = first
        .and_then(|t| t.name.split(':').next())
        .unwrap_or("the puzzle")
        .to_string();
    all.tests.extend(results.tests);
    all.score = rounded(all.tests.iter().map(|t| t.score).sum());
    all.extra_data.extend(results.extra_data);
    match hidden {
        // The report is the student's feedback: it waits with the tests.
        Some(visibility) => {
            if !results.output.is_empty() {
                all.tests.push(Test {
                    score: 0.0,
                    max_score: 0.0,
                    status: Status::Passed,
                    name: format!("{puzzle}: the report"),
                    output: results.output,
                    visibility,
                });
            }
            all.visibility = Some(visibility);
            all.output = HELD_BACK.into();
        }
        None if !results.output.is_empty() => {
            if !all.output.is_empty() {
                all.output.push('\n');
            }
            all.output += &results.output;
        }
        None => {}
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&all).expect("results serialize") + "\n";
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// `text` without its colours (ANSI SGR sequences): text for a file, not a terminal. The text
/// is made as it would be for the terminal and cleaned here, so the process's colour setting is
/// neither read nor changed (submissions are graded on several threads at once).
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            // `ESC [`, parameters, then one final byte in `@..=~`.
            chars.next();
            for f in chars.by_ref() {
                if ('@'..='~').contains(&f) {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// How a check scores in Gradescope's results.
#[derive(Debug, clap::Args)]
pub struct Scoring {
    /// The puzzle's points in Gradescope's results, shared equally among its cases.
    #[arg(long, default_value_t = 10.0, value_name = "POINTS")]
    pub points: f64,
    /// Who sees each test's result in Gradescope, and when.
    #[arg(long, value_enum, default_value_t = Visibility::Visible)]
    pub visibility: Visibility,
}

impl Scoring {
    /// The results of a file that could not be checked at all (missing, unreadable).
    pub fn not_checked(&self, puzzle: &str, why: &str) -> Results {
        failed(puzzle, "submitted", why, self.points, self.visibility)
    }

    /// Gradescope's results for `outcome`. The report is the student's: the commands it names
    /// are the ones they run in their own copy (`runner check puzzle-NN`), not the grader's.
    pub fn results(&self, outcome: &Outcome) -> Results {
        let view = super::View {
            runner: "runner".into(),
            rerun: Some(super::Rerun::of("runner", &outcome.puzzle)),
        };
        let report = plain(&super::human(outcome, &view));
        results(outcome, &report, self.points, self.visibility)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_have_two_decimals_and_sum_to_the_points() {
        let s = shares(10.0, 15);
        assert_eq!(s.len(), 15);
        assert!(
            s.iter()
                .all(|x| (x * 100.0 - (x * 100.0).round()).abs() < 1e-9)
        );
        assert_eq!(rounded(s.iter().sum()), 10.0);
        assert_eq!(shares(10.0, 3), [3.34, 3.33, 3.33]);
        assert_eq!(rounded(29.999999999999986), 30.0);
    }

    #[test]
    fn plain_takes_the_colours_out_and_leaves_the_text() {
        let coloured = "\x1b[1;32m✓\x1b[0m \x1b[1mpuzzle-01\x1b[0m passed [3]\n";
        assert_eq!(plain(coloured), "✓ puzzle-01 passed [3]\n");
        assert_eq!(plain("no colour, [1;2]"), "no colour, [1;2]");
    }
}
