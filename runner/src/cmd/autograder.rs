//! `runner gradescope`: Gradescope's autograder in one command, which `run_autograder` calls.
//!
//! For every puzzle of the conf (`puzzle-NN POINTS` a line), it finds the student's file in the
//! submission folder, checks it alone (a private copy, `private`) on the simulator, on the
//! published cases and on cases drawn fresh from a seed no student sees (`grade`'s), and writes
//! one results.json with a test per case and every score rounded to two decimals.
//!
//! The files are found by walking the folder here, not by a shell pipeline: a name holding a line
//! break or a space is a name, and a link is never followed. A submission's file for puzzle NN
//! is `puzzle-NN.cu` uploaded alone, or `puzzles/puzzle-NN/kernel.cu` of a submitted workbook (a
//! clone, a GitHub zipball with its one top folder); never a file under `solutions/`, `tests/`,
//! `fixtures/`, `bench/`, `target/` or `.git/`. The shallowest wins, then the newest. A missing
//! file is a failed test that says which names were looked for; a file that is a link, or has
//! other hard links, is a failed test that says so (its target is never read).
//!
//! The seed and the protection the compiles ran under go in `extra_data`, which Gradescope
//! keeps from students; the visibility applies to the tests and to the top-level output alike
//! (`gradescope::write`). Nothing is printed but one line: the score.

use crate::check::{self, BackendChoice};
use crate::classroom::private;
use crate::report::gradescope::Scoring;
use crate::report::gradescope::{self, Visibility};
use crate::workbook::registry;
use anyhow::{Context, anyhow};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The student's submission, as Gradescope unpacks it.
    #[arg(long, value_name = "DIR", default_value = "/autograder/submission")]
    submission: PathBuf,
    /// The puzzles graded and their points: `puzzle-NN POINTS` a line, `#` comments.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/autograder/source/puzzles.conf"
    )]
    conf: PathBuf,
    /// Where to write results.json (replaced).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/autograder/results/results.json"
    )]
    results: PathBuf,
    /// Who sees the results, and when (the tests and the report alike).
    #[arg(long, value_enum, default_value_t = Visibility::Visible)]
    visibility: Visibility,
    /// The seed of the fresh cases (default: a new one for each submission, in extra_data).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Seconds a GPU case may run before it is stopped.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
}

/// Folders of a whole clone that hold no submission.
const NOT_SUBMISSIONS: [&str; 6] = ["solutions", "tests", "fixtures", "bench", "target", ".git"];

/// The conf's lines: each puzzle and its points.
pub fn read_conf(path: &Path) -> anyhow::Result<Vec<(String, f64)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the conf {}", path.display()))?;
    let mut puzzles = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(puzzle), Some(points)) = (words.next(), words.next()) else {
            anyhow::bail!("{}:{}: want `puzzle-NN POINTS`", path.display(), n + 1);
        };
        let points: f64 = points
            .parse()
            .map_err(|_| anyhow!("{}:{}: `{points}` is not a number", path.display(), n + 1))?;
        puzzles.push((puzzle.to_string(), points));
    }
    Ok(puzzles)
}

/// A file of the submission that names a puzzle: its path, depth and modification time, and
/// whether it is a link or a regular file.
#[derive(Debug)]
struct Candidate {
    path: PathBuf,
    depth: usize,
    modified: std::time::SystemTime,
}

/// Every file under `dir` (links listed, never followed), with its depth, skipping the folders
/// of a clone that hold no submission.
fn files(dir: &Path, depth: usize, out: &mut Vec<Candidate>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            let skip = NOT_SUBMISSIONS.iter().any(|n| entry.file_name() == *n);
            if !skip && depth < 16 {
                files(&path, depth + 1, out);
            }
        } else {
            out.push(Candidate {
                path,
                depth,
                modified: meta.modified().unwrap_or(std::time::UNIX_EPOCH),
            });
        }
    }
}

/// The submission's file for `puzzle`: `puzzle-NN.cu`, or `puzzles/puzzle-NN/kernel.cu`; the
/// shallowest, then the newest.
fn find(all: &[Candidate], puzzle: &str) -> Option<PathBuf> {
    let single = format!("{puzzle}.cu");
    let names_it = |p: &Path| {
        let name = p.file_name().and_then(|n| n.to_str());
        let parent = p.parent();
        let folder = parent.and_then(Path::file_name).and_then(|n| n.to_str());
        let above = parent
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .and_then(|n| n.to_str());
        name == Some(single.as_str())
            || (name == Some("kernel.cu") && folder == Some(puzzle) && above == Some("puzzles"))
    };
    all.iter()
        .filter(|c| names_it(&c.path))
        .min_by(|a, b| a.depth.cmp(&b.depth).then(b.modified.cmp(&a.modified)))
        .map(|c| c.path.clone())
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    toolchain::sandbox::fail_closed();
    let conf = read_conf(&args.conf)?;
    let seed = args
        .seed
        .unwrap_or_else(crate::classroom::private::random_seed);
    let protection = toolchain::sandbox::protection();
    let _ = std::fs::remove_file(&args.results);
    let mut all = vec![];
    files(&args.submission, 0, &mut all);
    let mut worker = check::gpu_worker();
    for (id, points) in &conf {
        let scoring = Scoring {
            points: *points,
            visibility: args.visibility,
        };
        let results = match registry::find(id) {
            Err(e) => scoring.not_checked(id, &format!("the conf names no puzzle {id}: {e}")),
            Ok(puzzle) => grade_one(&args, puzzle.drawn(seed), &all, &scoring, &mut worker)?,
        };
        let mut results = results;
        results.extra_data.insert("seed".into(), seed.into());
        results
            .extra_data
            .insert("protection".into(), protection.name().into());
        gradescope::write(&args.results, results)?;
    }
    let written: gradescope::Results = serde_json::from_str(
        &std::fs::read_to_string(&args.results)
            .with_context(|| format!("cannot read {}", args.results.display()))?,
    )?;
    let total: f64 = conf.iter().map(|(_, p)| p).sum();
    println!(
        "graded {} puzzle(s): {} of {} points",
        conf.len(),
        written.score,
        gradescope::rounded(total)
    );
    Ok(ExitCode::SUCCESS)
}

/// One puzzle's results: its file found, copied alone and checked.
fn grade_one(
    args: &Args,
    puzzle: spec::Puzzle,
    all: &[Candidate],
    scoring: &Scoring,
    worker: &mut gpu::pool::Worker,
) -> anyhow::Result<gradescope::Results> {
    let Some(file) = find(all, puzzle.id) else {
        return Ok(scoring.not_checked(
            puzzle.id,
            &format!(
                "expected a file named {id}.cu in your submission (or puzzles/{id}/kernel.cu of a workbook): none was found",
                id = puzzle.id
            ),
        ));
    };
    let shown = file
        .strip_prefix(&args.submission)
        .unwrap_or(&file)
        .display()
        .to_string();
    let private = match private::copy(&file)? {
        Ok(private) => private,
        Err(why) => {
            return Ok(scoring.not_checked(puzzle.id, &format!("{shown} was refused: {why}")));
        }
    };
    let req = check::Request {
        puzzle,
        file: private.file.clone(),
        backend: BackendChoice::Sim,
        gpu_limit: Duration::from_secs_f64(args.timeout.max(0.1)),
        only_case: None,
        full_later: false,
    };
    match check::evaluate(&req, worker) {
        Ok(outcome) => Ok(scoring.results(&private::renamed(outcome, &private, &shown))),
        Err(e) => Ok(scoring.not_checked(puzzle.id, &format!("{shown}: {e:#}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_found_by_walking_names_with_line_breaks_and_links_left_alone() {
        let dir = std::env::temp_dir().join(format!("autograder-find-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let odd = dir.join("a\nb c/puzzles/puzzle-04");
        std::fs::create_dir_all(&odd).unwrap();
        std::fs::create_dir_all(dir.join("clone/solutions")).unwrap();
        std::fs::write(odd.join("kernel.cu"), "x").unwrap();
        std::fs::write(dir.join("clone/solutions/puzzle-05.cu"), "x").unwrap();
        std::fs::write(dir.join("puzzle-06.cu"), "x").unwrap();
        let mut all = vec![];
        files(&dir, 0, &mut all);
        assert_eq!(find(&all, "puzzle-04"), Some(odd.join("kernel.cu")));
        assert_eq!(find(&all, "puzzle-05"), None, "never under solutions/");
        assert_eq!(find(&all, "puzzle-06"), Some(dir.join("puzzle-06.cu")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_conf_is_read_with_its_comments() {
        let dir = std::env::temp_dir().join(format!("autograder-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("puzzles.conf");
        std::fs::write(&conf, "# week 1\npuzzle-01 10\n\npuzzle-04 7.5 extra\n").unwrap();
        let read = read_conf(&conf).unwrap();
        assert_eq!(
            read,
            [
                ("puzzle-01".to_string(), 10.0),
                ("puzzle-04".to_string(), 7.5)
            ]
        );
        std::fs::write(&conf, "puzzle-01 ten\n").unwrap();
        assert!(read_conf(&conf).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
