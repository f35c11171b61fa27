//! `runner validate [puzzle...]`: the instructor's one command. Every solution passes, every
//! skeleton fails, skeleton and solution agree outside the learner's part, the book's links resolve
//! and the book builds (the checks are `crate::classroom::validate`). A progress bar on stderr while it runs
//! (hidden when stderr is not a terminal), then a table of puzzle by check, then one line per
//! failure with its fix, and, without a GPU, what it did not run (the GPU and full-scale cases).
//! Exit status 0 when everything is in order, 1 otherwise. In a student's copy (no `solutions/`)
//! it says that it is for instructors.

use crate::classroom::validate::{self, Check, Finding};
use crate::workbook::{self, registry};
use colored::Colorize;
use indicatif::{ProgressBar, ProgressStyle};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The puzzles to validate, e.g. puzzle-03 (every puzzle when none is named).
    puzzles: Vec<String>,
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    workbook::require_solutions("runner validate")?;
    let puzzles = if args.puzzles.is_empty() {
        registry::all()
    } else {
        args.puzzles
            .iter()
            .map(|name| registry::find(name).map_err(anyhow::Error::from))
            .collect::<anyhow::Result<_>>()?
    };
    let root = workbook::root();
    let bar = ProgressBar::new(validate::steps(puzzles.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let findings = validate::run(&root, &puzzles, |subject, check| {
        bar.set_message(format!("{subject}: {}", check.name()));
        bar.inc(1);
    });
    bar.finish_and_clear();
    print!("{}", table(&findings));
    // What a machine without a GPU leaves out, said rather than passed over in silence.
    if !gpu::libcuda_present() {
        println!(
            "not run here (no CUDA GPU): the solutions on the GPU, and every full-scale case; run `runner validate` on a machine with an NVIDIA GPU for those"
        );
    }
    let failures: Vec<(&Finding, &String)> = findings
        .iter()
        .flat_map(|f| f.failures.iter().map(move |line| (f, line)))
        .collect();
    if failures.is_empty() {
        println!(
            "{} {} puzzles and the book are in order",
            "✓".green().bold(),
            puzzles.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} {} to fix:",
        "✗".red().bold(),
        match failures.len() {
            1 => "1 problem".to_string(),
            n => format!("{n} problems"),
        }
    );
    for (finding, line) in failures {
        println!(
            "  {} {}: {line}",
            finding.subject.bold(),
            finding.check.name()
        );
    }
    Ok(ExitCode::from(1))
}

/// Subjects as rows, checks as columns: ✓, ✗, or `-` where a check does not apply.
fn table(findings: &[Finding]) -> String {
    let mut subjects: Vec<&str> = vec![];
    for f in findings {
        if !subjects.contains(&f.subject.as_str()) {
            subjects.push(&f.subject);
        }
    }
    let width = |c: Check| c.name().chars().count().max(1) + 2;
    let mut out = format!("{:<11}", "");
    for c in Check::ALL {
        out += &format!("{:<w$}", c.name(), w = width(c));
    }
    out = out.trim_end().to_string() + "\n";
    for subject in subjects {
        let mut line = format!("{subject:<11}");
        for c in Check::ALL {
            let cell = findings
                .iter()
                .find(|f| f.subject == subject && f.check == c);
            let pad = " ".repeat(width(c) - 1);
            line += &match cell {
                None => format!("-{pad}"),
                Some(f) if f.failures.is_empty() => format!("{}{pad}", "✓".green()),
                Some(_) => format!("{}{pad}", "✗".red()),
            };
        }
        out += line.trim_end();
        out += "\n";
    }
    out
}
