//! What `runner validate` checks, as functions that return findings and print nothing.
//!
//! For each puzzle: the skeleton compiles and fails on the simulator; each solution (the reference
//! and any second checked one, `registry::SHOWPIECES`) passes every
//! case (simulator, and GPU where there is one) with no diagnostic and within its budgets; the two
//! files are equal outside the learner's regions (`ANCHOR: solve` .. `ANCHOR_END: solve`); the
//! chapter exists and is listed; its `{{#include}}` links resolve; it has at least two hints, none
//! empty. For the book as a whole: the other pages' links resolve and mdBook builds it. Every
//! failure is one line that says what is wrong and what to do about it.

use crate::check::{self, BackendChoice, Outcome};
use crate::classroom::book;
use crate::classroom::drift::compare;
use crate::workbook::{self, registry};
use spec::{Kind, Puzzle};
use std::path::Path;
use std::time::Duration;

/// One column of the summary table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The skeleton compiles and fails.
    Skeleton,
    /// The solution passes every case.
    Solution,
    /// Skeleton and solution agree outside the learner's part.
    Sync,
    Chapter,
    Includes,
    Hints,
    /// The book builds through mdBook.
    Builds,
}

impl Check {
    pub const ALL: [Check; 7] = [
        Check::Skeleton,
        Check::Solution,
        Check::Sync,
        Check::Chapter,
        Check::Includes,
        Check::Hints,
        Check::Builds,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Check::Skeleton => "skeleton",
            Check::Solution => "solution",
            Check::Sync => "in sync",
            Check::Chapter => "chapter",
            Check::Includes => "includes",
            Check::Hints => "hints",
            Check::Builds => "builds",
        }
    }
}

/// What one check found wrong: what, then the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem(pub String);

/// The result of one check of one subject (a puzzle id, or `book`).
#[derive(Clone, Debug)]
pub struct Finding {
    pub subject: String,
    pub check: Check,
    /// Empty when it passed; else one line per problem: what is wrong, then the fix.
    pub failures: Vec<String>,
}

/// Runs every check of `puzzles` and of the book under `root`. `step` is called before each
/// check with its subject and check (for a progress bar); there are `steps(puzzles.len())`.
pub fn run(root: &Path, puzzles: &[Puzzle], mut step: impl FnMut(&str, Check)) -> Vec<Finding> {
    let mut findings = vec![];
    let mut record = |subject: &str, check: Check, failures: Vec<String>| {
        findings.push(Finding {
            subject: subject.to_string(),
            check,
            failures,
        });
    };
    for p in puzzles {
        for check in &Check::ALL[..6] {
            step(p.id, *check);
            let failures = match check {
                Check::Skeleton => skeleton(root, p).err().into_iter().map(|p| p.0).collect(),
                Check::Solution => solution(root, p).err().into_iter().map(|p| p.0).collect(),
                Check::Sync => in_sync(root, p).err().into_iter().map(|p| p.0).collect(),
                Check::Chapter => chapter(root, p).err().into_iter().map(|p| p.0).collect(),
                Check::Includes => includes(root, &p.chapter_file()),
                _ => hints(p).err().into_iter().map(|p| p.0).collect(),
            };
            record(p.id, *check, failures);
        }
    }
    step("book", Check::Includes);
    let chapters: Vec<String> = puzzles.iter().map(Puzzle::chapter_file).collect();
    let others = other_pages(root, &chapters);
    record(
        "book",
        Check::Includes,
        others
            .iter()
            .flat_map(|page| includes(root, page))
            .collect(),
    );
    step("book", Check::Builds);
    let built = book::build(root).err().map(|e| {
        format!(
            "the book does not build: {e:#}: fix it, then run `{} book`",
            workbook::runner_command()
        )
    });
    record("book", Check::Builds, built.into_iter().collect());
    findings
}

/// How many times [`run`] calls its `step` for `puzzles` puzzles.
pub fn steps(puzzles: usize) -> usize {
    puzzles * 6 + 2
}

fn check_command(p: &Puzzle, flag: &str) -> String {
    format!("{} check {}{flag}", workbook::runner_command(), p.id)
}

thread_local! {
    /// One warm GPU worker for every check of a validation (started only where there is a GPU).
    static GPU: std::cell::RefCell<gpu::pool::Worker> = std::cell::RefCell::new(check::gpu_worker());
}

fn evaluate(
    root: &Path,
    p: &Puzzle,
    file: &str,
    backend: BackendChoice,
) -> Result<Outcome, Problem> {
    let req = check::Request {
        puzzle: *p,
        file: root.join(file),
        backend,
        gpu_limit: Duration::from_secs(10),
        only_case: None,
        full_later: false,
    };
    GPU.with_borrow_mut(|gpu| check::evaluate(&req, gpu))
        .map_err(|e| Problem(format!("{file}: {e:#}")))
}

/// The diagnostics that mean a file never reached its cases.
fn does_not_build(o: &Outcome) -> Option<String> {
    o.diagnostics
        .iter()
        .find(|d| {
            matches!(
                d.kind,
                Kind::CompileError
                    | Kind::KernelNotFound
                    | Kind::SignatureMismatch
                    | Kind::BadLaunchShape
                    | Kind::NvrtcMissing
            )
        })
        .map(|d| format!("{}: {}", d.kind.name(), first_line(&d.message)))
}

/// The skeleton compiles and fails on the simulator.
pub fn skeleton(root: &Path, p: &Puzzle) -> Result<(), Problem> {
    let file = p.kernel_path();
    let outcome = evaluate(root, p, &file, BackendChoice::Sim)?;
    if let Some(why) = does_not_build(&outcome) {
        return Err(Problem(format!(
            "{file} does not compile ({why}): fix the skeleton, then run `{}`",
            check_command(p, "")
        )));
    }
    if outcome.passed {
        return Err(Problem(format!(
            "{file} passes every case, so the learner has nothing to do: cut the learner's part \
             out between `ANCHOR: solve` and `ANCHOR_END: solve`"
        )));
    }
    Ok(())
}

/// Every solution of the puzzle (the reference and any showpiece, see [`registry::SHOWPIECES`])
/// passes every case on every backend here that can run it, with no diagnostic.
pub fn solution(root: &Path, p: &Puzzle) -> Result<(), Problem> {
    let failures: Vec<String> = registry::solutions(p)
        .iter()
        .filter_map(|s| one_solution(root, p, s).err().map(|e| e.0))
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Problem(failures.join("; ")))
    }
}

/// One solution passes: on the simulator only where it needs a GPU other than this one's.
fn one_solution(root: &Path, p: &Puzzle, s: &registry::Solution) -> Result<(), Problem> {
    let file = &s.file;
    let backend = match s.arch {
        Some(arch) if Some(arch.to_string()) != gpu_arch() => BackendChoice::Sim,
        _ => BackendChoice::Auto,
    };
    let outcome = evaluate(root, p, file, backend)?;
    if outcome.passed {
        return Ok(());
    }
    let rerun = check_command(p, &format!(" {}", s.option()));
    if let Some(why) = does_not_build(&outcome) {
        return Err(Problem(format!(
            "{file} does not compile ({why}): run `{rerun}`"
        )));
    }
    if let Some(case) = outcome.cases.iter().find(|c| !c.passed) {
        return Err(Problem(format!(
            "{file} fails case {} on {}: run `{rerun}`",
            case.name,
            case.backend.name()
        )));
    }
    let why = outcome
        .diagnostics
        .first()
        .map(|d| format!("{}: {}", d.kind.name(), first_line(&d.message)))
        .unwrap_or_else(|| "no case ran".into());
    Err(Problem(format!(
        "{file} does not pass ({why}): run `{rerun}`"
    )))
}

/// The GPU's architecture (`sm_90`), where there is one.
fn gpu_arch() -> Option<String> {
    let device = |gpu: &mut gpu::pool::Worker| gpu.device().ok().flatten();
    gpu::libcuda_present()
        .then(|| GPU.with_borrow_mut(device))
        .flatten()
        .map(|d| d.arch())
}

/// The skeleton equals every solution outside the learner's regions.
pub fn in_sync(root: &Path, p: &Puzzle) -> Result<(), Problem> {
    let sk = p.kernel_path();
    let read =
        |f: &str| std::fs::read_to_string(root.join(f)).map_err(|e| Problem(format!("{f}: {e}")));
    let skeleton = read(&sk)?;
    for so in registry::solutions(p).into_iter().map(|s| s.file) {
        compare(&skeleton, &read(&so)?).map_err(|d| Problem(d.describe(&sk, &so)))?;
    }
    Ok(())
}

/// The chapter's file exists and SUMMARY.md lists it.
pub fn chapter(root: &Path, p: &Puzzle) -> Result<(), Problem> {
    let page = p.chapter_file();
    if !root.join("book/src").join(&page).is_file() {
        return Err(Problem(format!(
            "book/src/{page} is missing: write the chapter and list it in book/src/SUMMARY.md"
        )));
    }
    let summary = std::fs::read_to_string(root.join("book/src/SUMMARY.md")).unwrap_or_default();
    if !summary.contains(&format!("]({page})")) {
        return Err(Problem(format!(
            "book/src/SUMMARY.md does not list {page}: add `- [{}]({page})`",
            p.title
        )));
    }
    Ok(())
}

/// Every link of one page of the book resolves; one line per broken link.
pub fn includes(root: &Path, page: &str) -> Vec<String> {
    let path = root.join("book/src").join(page);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return vec![]; // a missing chapter is the chapter check's finding
    };
    let dir = path.parent().unwrap_or(root);
    book::check_includes(&format!("book/src/{page}"), &text, dir)
        .into_iter()
        .map(|b| {
            format!(
                "{}:{}: {} does not resolve ({}): fix the path or add the anchor",
                b.chapter, b.line, b.link, b.problem
            )
        })
        .collect()
}

/// At least two hints, none empty.
pub fn hints(p: &Puzzle) -> Result<(), Problem> {
    let empty = p.hints.iter().filter(|h| h.trim().is_empty()).count();
    if p.hints.len() < 2 || empty > 0 {
        return Err(Problem(format!(
            "puzzles/{}/src/lib.rs has {} hints ({empty} empty): give at least two staged hints, none empty",
            p.id,
            p.hints.len()
        )));
    }
    Ok(())
}

/// The book's markdown pages other than `chapters`, relative to `book/src`, sorted.
fn other_pages(root: &Path, chapters: &[String]) -> Vec<String> {
    let src = root.join("book/src");
    let mut pages = vec![];
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path
                    .strip_prefix(&src)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                if !chapters.contains(&rel) && !is_puzzle_chapter(&rel) {
                    pages.push(rel);
                }
            }
        }
    }
    pages.sort();
    pages
}

/// Chapters of puzzles not being validated belong to their own puzzle's check.
fn is_puzzle_chapter(page: &str) -> bool {
    page.strip_prefix("puzzle-")
        .and_then(|s| s.strip_suffix(".md"))
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_skeletons_agree_with_their_solutions() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for p in crate::workbook::registry::all() {
            assert_eq!(in_sync(root, &p), Ok(()), "{}", p.id);
        }
    }

    #[test]
    fn hints_need_two_non_empty() {
        let mut p = crate::workbook::registry::all()[0];
        assert_eq!(hints(&p), Ok(()));
        p.hints = &["only one"];
        assert!(hints(&p).is_err());
        p.hints = &["one", "  "];
        assert!(hints(&p).unwrap_err().0.contains("1 empty"));
    }
}
