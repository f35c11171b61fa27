//! `runner release DIR`: writes the students' copy of the workbook, the one a class starts from
//! (GitHub Classroom's template repository, Gradescope's autograder bundle). It holds every
//! skeleton and puzzle crate, the runner's and the kernels' source (so `cargo run -p runner`
//! builds there), and the book; it holds no reference solution: no `solutions/`, no chapter's
//! `## Solution` section (replaced by a line saying where it went), none of the tests, tuning
//! notes or graders that quote solutions. What is copied is an allow-list, so a file added to the
//! workbook later stays out until it is named here.
//!
//! In the copy, `check`, `hint`, `list`, `watch`, `show`, `profile` and `bench` (of the learner's
//! own kernel) work; `validate`, `--solution` and bench's reference rows say they are for
//! instructors (`workbook::require_solutions`).

use crate::workbook;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder to write the students' copy into (new, or empty).
    dir: PathBuf,
}

/// Files copied at the top of the workbook.
const TOP_FILES: [&str; 3] = ["Cargo.toml", "Cargo.lock", ".gitignore"];

/// Folders copied whole, below the root (what a build of the runner and the book need).
const FOLDERS: [&str; 10] = [
    "kernels/ptx",
    "kernels/spec",
    "kernels/sim",
    "kernels/toolchain",
    "kernels/gpu",
    "kernels/fuzz",
    "kernels/profile",
    "runner/src",
    "puzzles",
    "book",
];

/// Single files below the root.
const FILES: [&str; 1] = ["runner/Cargo.toml"];

/// Names never copied from inside those folders: build output, and tests (they quote solutions).
const NEVER: [&str; 4] = ["target", "build", "tests", ".workbook-state.json"];

/// The students' README, written into the copy.
const README: &str = "# GPU Convolution Puzzles\n\nA workbook of graded GPU puzzles in CUDA. Fill in `puzzles/puzzle-NN/kernel.cu` between the\n`ANCHOR: solve` markers, then check it:\n\n```sh\ncargo run --release -p runner -- check puzzle-01\n```\n\n`runner` below is `cargo run --release -p runner --` (or `target/release/runner` once built).\n\n- `runner list`: the puzzles, and which you have solved.\n- `runner check puzzle-NN`: your kernel against every case, with what is wrong at your line.\n- `runner hint puzzle-NN`: one more hint each time.\n- `runner watch`: checks again each time you save.\n- `runner show puzzle-NN` and `runner profile puzzle-NN`: who touched what, and what it costs.\n- `runner bench puzzle-NN`: your kernel's time, on a machine with an NVIDIA GPU.\n\nThe chapters are in `book/src/` (`runner book puzzle-NN` builds and opens one). No GPU is needed:\nwithout one the runner runs your kernel in its own simulator. Rust 1.89 or newer, and Python 3\nwith pip (used once, to fetch NVRTC, the CUDA compiler library) unless a CUDA toolkit is\ninstalled.\n";

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let root = workbook::root();
    let dir = &args.dir;
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!(
            "{} is not empty: runner release writes a new copy (give a new folder)",
            dir.display()
        );
    }
    if std::fs::canonicalize(dir.parent().unwrap_or(Path::new(".")))
        .is_ok_and(|p| p.starts_with(&root) && !p.starts_with(root.join("target")))
    {
        eprintln!(
            "note: {} is inside the workbook; git will see it there",
            dir.display()
        );
    }
    let mut copied = 0usize;
    for top in TOP_FILES.iter().chain(FILES.iter()) {
        copied += copy(&root.join(top), &dir.join(top))?;
    }
    for folder in FOLDERS {
        copied += copy_tree(&root.join(folder), &dir.join(folder))?;
    }
    std::fs::write(dir.join("README.md"), README)?;
    // The lock file lists the workspace's crates; `kernels/conformance` stays behind (it tests
    // the simulator against solutions), so its entry goes too and a first build leaves the copy's
    // Cargo.lock as committed.
    let lock = dir.join("Cargo.lock");
    if let Ok(text) = std::fs::read_to_string(&lock) {
        std::fs::write(&lock, without_package(&text, "conformance"))?;
    }
    let stripped = strip_book(&dir.join("book/src"))?;
    println!(
        "wrote the students' copy to {} ({copied} files, {stripped} chapters without their solution); no solutions/",
        dir.display()
    );
    println!(
        "Next: add the grading workflow and commit it as the template repository (graders/README.md of this workbook, the instructor's, says how)"
    );
    Ok(ExitCode::SUCCESS)
}

/// `lock` (a Cargo.lock) without the `[[package]]` entry of the workspace crate `name`.
pub fn without_package(lock: &str, name: &str) -> String {
    let head = format!("[[package]]\nname = \"{name}\"\n");
    let Some(start) = lock.find(&head) else {
        return lock.to_string();
    };
    let rest = &lock[start + head.len()..];
    let end = rest
        .find("\n[[package]]")
        .map_or(lock.len(), |e| start + head.len() + e + 1);
    format!("{}{}", &lock[..start], &lock[end..])
}

/// Copies one file (creating its folder); 1 when copied, 0 when it does not exist.
fn copy(from: &Path, to: &Path) -> anyhow::Result<usize> {
    if !from.is_file() {
        return Ok(0);
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::copy(from, to).with_context(|| format!("cannot copy {}", from.display()))?;
    Ok(1)
}

/// Copies a folder, leaving out [`NEVER`] and links; the number of files copied.
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<usize> {
    let mut copied = 0;
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(0);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if NEVER.iter().any(|n| name == *n) {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copied += copy_tree(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            copied += copy(&entry.path(), &to.join(&name))?;
        }
    }
    Ok(copied)
}

/// Replaces each chapter's `## Solution` section (up to the next `## ` heading) with one line,
/// and drops any other line that includes a solution; returns how many chapters changed.
fn strip_book(src: &Path) -> anyhow::Result<usize> {
    let mut changed = 0;
    for entry in std::fs::read_dir(src)?.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let stripped = without_solutions(&text);
        if stripped != text {
            std::fs::write(&path, stripped)?;
            changed += 1;
        }
    }
    Ok(changed)
}

/// `chapter` without its solution: see [`strip_book`].
pub fn without_solutions(chapter: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in chapter.lines() {
        if line.starts_with("## ") {
            skipping = line.trim() == "## Solution";
            if skipping {
                out += "## Solution\n\nThe reference solution is your instructor's: this copy of the workbook has none.\n\n";
                continue;
            }
        }
        if skipping || line.contains("solutions/") && line.contains("{{#") {
            continue;
        }
        out += line;
        out += "\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_file_loses_the_crate_left_behind() {
        let lock = "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1\"\n\n[[package]]\nname = \"conformance\"\nversion = \"0.1.0\"\ndependencies = [\n \"a\",\n]\n\n[[package]]\nname = \"z\"\nversion = \"2\"\n";
        let out = without_package(lock, "conformance");
        assert!(!out.contains("conformance"), "{out}");
        assert!(
            out.contains("name = \"a\"") && out.contains("name = \"z\""),
            "{out}"
        );
        assert_eq!(without_package(&out, "conformance"), out);
    }

    #[test]
    fn a_chapter_loses_its_solution_section_and_keeps_the_rest() {
        let chapter = "# P\n\n## The idea\n\nIdea.\n\n## Solution\n\n```cuda\n{{#include ../../solutions/puzzle-01.cu:solve}}\n```\n\n### Measured\n\n12 us\n\n## Looking ahead\n\nNext.\n";
        let out = without_solutions(chapter);
        assert!(out.contains("## The idea\n\nIdea."));
        assert!(out.contains("## Looking ahead\n\nNext."));
        assert!(!out.contains("solutions/"), "{out}");
        assert!(!out.contains("12 us"), "{out}");
    }
}
