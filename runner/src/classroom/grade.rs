//! `runner grade <puzzle> <folder>`: checks every `.cu` file of a folder of submissions and its
//! subfolders (sorted by path, `grade_files`) against one puzzle, prints a table, and writes `grade.csv` and `grade.json` into the
//! folder (or `--out DIR`), with the class report `report.html` (`class_report`). One row per
//! file, whatever happened to it: a submission that does not
//! compile, or cannot be read, is a failed row, never an abort. Exit status 0 when grading
//! completed (however the students did), 2 for a usage error. Submissions are checked in parallel
//! (`--jobs`, one per core by default); on a GPU their full-scale cases run after every
//! submission's small cases, one submission at a time (`later`), the passing ones are timed after
//! them, and the submissions whose kernels printed come last (`printing_last`); the rows keep the
//! files' order.
//!
//! Every submission is checked on the published cases and on cases drawn fresh for this grade
//! (`spec::Puzzle::graded_cases`): every published case's sizes with new data, and cases of
//! random sizes within the puzzle's contract (on a GPU, the full-scale cases with new data too),
//! from a seed no student sees. It is recorded in grade.json (and in each Gradescope file's
//! `extra_data`); `--seed N` draws the same cases again.
//!
//! Each submission is checked alone, from a private copy (`private`): a link or a file with
//! other hard links is refused, with why, as a failed row. The protection the compiles ran under
//! (`toolchain::sandbox::protection`) is printed and recorded in grade.json. Nothing is written
//! outside the output folder: a submission's Gradescope file is named by its safe, unique output
//! name (`grade_files`), and CSV cells that a spreadsheet would read as a formula are escaped.

use super::row::Row;
use crate::bench::timing::GRADE_PLAN;
use crate::check::later;
use crate::check::{self, Backend, BackendChoice, CaseResult, Outcome};
use crate::report::gradescope;
use crate::report::gradescope::Scoring;
use crate::workbook::{self, registry};
use anyhow::Context;
use gpu::pool::Worker;
use indicatif::ProgressBar;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What `runner grade` takes (its arguments, parsed by `cmd::grade`).
#[derive(Debug, clap::Args)]
pub struct Options {
    /// The puzzle the submissions solve, e.g. puzzle-03.
    puzzle: String,
    /// The folder of submissions: every `.cu` file in it or its subfolders is graded (anything
    /// else is listed as skipped, with why).
    folder: PathBuf,
    /// Where to write grade.csv, grade.json and report.html (default: the folder of submissions).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Where to run the cases.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Seconds a GPU case may run before it is stopped.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// Submissions checked at once (default: one per core). On a GPU their full-scale cases come
    /// after every submission's small cases, one submission at a time, and the timing of the
    /// passing ones after that.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Also write each submission's results in this platform's format (gradescope: one
    /// results.json per file, as gradescope/<file>.json beside grade.csv).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// The seed of the cases drawn fresh for this grade (default: a new one each run, recorded
    /// in grade.json): `--seed N` grades again on the same cases.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    #[command(flatten)]
    scoring: Scoring,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Gradescope,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    puzzle: &'a str,
    /// The seed the fresh cases were drawn from (`--seed` draws them again).
    seed: u64,
    /// What kept each compile from reading outside its submission: `landlock` or `headers-only`.
    protection: &'static str,
    /// The same, in a sentence.
    protection_detail: String,
    submissions: &'a [Row],
    report: &'a crate::classroom::class_report::Class,
}

/// A submission refused before it was checked (a link, a file with other hard links): its row
/// says why.
#[derive(Debug)]
struct Refusal(crate::classroom::private::Refused);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

impl std::error::Error for Refusal {}

/// Checks `file` (shown as `shown`) from a private copy ([`crate::classroom::private`]); the copy is kept
/// with the outcome for the GPU's second pass.
fn check_alone(
    args: &Options,
    puzzle: spec::Puzzle,
    file: &Path,
    shown: &str,
    gpu: &mut Worker,
) -> (
    anyhow::Result<Outcome>,
    Option<crate::classroom::private::Private>,
) {
    let private = match crate::classroom::private::copy(file) {
        Ok(Ok(private)) => private,
        Ok(Err(why)) => return (Err(anyhow::Error::new(Refusal(why))), None),
        Err(e) => return (Err(e), None),
    };
    let req = request(args, puzzle, &private.file);
    let outcome =
        check::evaluate(&req, gpu).map(|o| crate::classroom::private::renamed(o, &private, shown));
    (outcome, Some(private))
}

/// Grades every submission of `args.folder`, prints the table and writes the files.
pub fn run(args: Options) -> anyhow::Result<ExitCode> {
    toolchain::sandbox::fail_closed();
    let seed = args.seed.unwrap_or_else(super::private::random_seed);
    let puzzle = registry::find(&args.puzzle)?.drawn(seed);
    let out_dir = args.out.clone().unwrap_or_else(|| args.folder.clone());
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    let found = super::grade_files::walk(&args.folder, same(&out_dir, &args.folder), puzzle.id)?;
    let files: Vec<PathBuf> = found.submissions.iter().map(|s| s.path.clone()).collect();
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let protection = toolchain::sandbox::protection();
    let bar = ProgressBar::new(files.len() as u64);
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    // A handle on the GPU workers per job (they share `gpu::pool`'s slots), kept from one
    // submission to the next and from one pass to the next.
    let workers: Vec<Mutex<Worker>> = (0..jobs.clamp(1, files.len().max(1)))
        .map(|_| Mutex::new(check::gpu_worker()))
        .collect();
    // `profile`'s predicted times, made here where nothing will be measured: the report only
    // reads them.
    let predictor = crate::classroom::class_report::Predictor::new(puzzle);
    let checking = gpu::trace::phase("grade: check every submission (the GPU's small cases)");
    let (checked, predicted): (Vec<_>, Vec<_>) =
        in_parallel(&workers, &found.submissions, |submission, gpu| {
            let file = &submission.path;
            let shown = workbook::display(file);
            bar.set_message(shown.clone());
            let small =
                gpu::trace::phase_of(|| format!("grade: small cases of {}", file.display()));
            let checked = check_alone(&args, puzzle, file, &submission.name, gpu);
            drop(small);
            let predicted = match &checked {
                (Ok(outcome), Some(private)) => {
                    predictor.submission(outcome, &private.file, &shown)
                }
                _ => None,
            };
            bar.inc(1);
            (checked, predicted)
        })
        .into_iter()
        .unzip();
    let (mut graded, privates): (Vec<_>, Vec<_>) = checked.into_iter().unzip();
    drop(checking);
    // Every submission's small cases are done: no fault of one can wait for another's long
    // full case now. The full cases run one submission after another, on one worker (`later`),
    // and each group's passing submissions are timed after its full cases, on the same worker:
    // kernels of other submissions running beside a timed one would slow it. The submissions
    // whose kernels printed come last (`printing_last`).
    let mut bench: Vec<Option<f64>> = vec![None; files.len()];
    let mut gpu = workers[0].lock().expect("no thread panicked holding it");
    // Built once for all of them, when the first needs it (a benchmark sends its inputs).
    let mut full: Option<Option<spec::Case>> = None;
    for group in printing_last(&graded) {
        let phase = gpu::trace::phase("grade: the GPU's full cases, one submission at a time");
        for &i in &group {
            let Some(private) = &privates[i] else {
                continue;
            };
            let req = request(&args, puzzle, &private.file);
            bar.set_message(format!(
                "{} (full-scale cases)",
                workbook::display(&files[i])
            ));
            if let Ok(outcome) = &mut graded[i] {
                later::finish(&req, &mut gpu, outcome);
            }
        }
        drop(phase);
        let _timing = gpu::trace::phase("grade: time the submissions that passed");
        for &i in &group {
            if let Ok(outcome) = &graded[i]
                && outcome.passed
                && outcome.backends.contains(&Backend::Gpu)
                && let Some(case) =
                    full.get_or_insert_with(|| crate::bench::timing::full_case(&puzzle).ok())
                && let Some(private) = &privates[i]
            {
                bench[i] = crate::bench::median_seconds(
                    &mut gpu,
                    &puzzle,
                    case,
                    &private.file,
                    GRADE_PLAN,
                );
            }
        }
    }
    drop(gpu);
    let facts = crate::classroom::class_report::facts(&puzzle, &files, &graded, &predicted);
    let mut rows = vec![];
    let small_cases = puzzle.graded_cases(spec::Scale::Small).len();
    for ((submission, graded), bench_seconds) in found.submissions.iter().zip(graded).zip(bench) {
        let name = submission.name.clone();
        if let Some(Format::Gradescope) = args.format {
            // `alice/kernel.cu` is gradescope/alice/kernel.json: two students' files stay two,
            // under a name of safe characters (`grade_files`), inside the output folder.
            let mut file = submission.out.clone().into_os_string();
            file.push(".json");
            let path = out_dir.join("gradescope").join(file);
            let _ = std::fs::remove_file(&path); // a file of this grade, not added to an old one
            let mut results = match &graded {
                Ok(outcome) => args.scoring.results(outcome),
                Err(e) => args
                    .scoring
                    .not_checked(puzzle.id, &format!("{name}: {e:#}")),
            };
            results.extra_data.insert("seed".into(), seed.into());
            results
                .extra_data
                .insert("protection".into(), protection.name().into());
            gradescope::write(&path, results)?;
        }
        rows.push(match graded {
            Ok(outcome) => Row {
                bench_seconds,
                ..row(name, &outcome, small_cases)
            },
            Err(e) if e.is::<Refusal>() => Row {
                diagnostics: vec!["refused".into()],
                ..unreadable(name, &e, small_cases)
            },
            Err(e) if args.backend == BackendChoice::Gpu => return Err(e),
            Err(e) => unreadable(name, &e, small_cases),
        });
    }
    drop(privates);
    bar.finish_and_clear();
    print!("{}", table(&rows));
    print!("{}", super::grade_files::skipped_lines(&found.skipped));
    let class = crate::classroom::class_report::write(
        &out_dir,
        &puzzle,
        facts,
        &rows,
        &found.skipped,
        &predictor,
    )?;
    let csv_path = out_dir.join("grade.csv");
    let json_path = out_dir.join("grade.json");
    std::fs::write(&csv_path, csv(&rows))
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let report = Report {
        puzzle: puzzle.id,
        seed,
        protection: protection.name(),
        protection_detail: protection.describe(),
        submissions: &rows,
        report: &class,
    };
    let json = serde_json::to_string_pretty(&report).expect("a report serializes") + "\n";
    std::fs::write(&json_path, json)
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    let passed = rows.iter().filter(|r| r.passed).count();
    println!("compiles confined by {}", protection.describe());
    println!(
        "{passed}/{} passed {} (published cases and cases drawn fresh from seed {seed}); wrote {}, {} and {}",
        rows.len(),
        puzzle.id,
        csv_path.display(),
        json_path.display(),
        out_dir.join("report.html").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The submissions in two groups for the GPU's second pass: those whose kernels printed nothing
/// in their cases so far, then those that printed. `printf` from every thread of a full-scale
/// case is slow (on an H100, puzzle 04's 1,500,000 lines ran past the 10 s limit: printf
/// serializes the threads that print), and a timeout stops the worker, so the submission after it
/// would wait for a fresh worker and its cases to be built again (1.0 s measured). Last, it
/// holds up no other submission's full cases or timing.
fn printing_last(graded: &[anyhow::Result<Outcome>]) -> [Vec<usize>; 2] {
    let printed =
        |i: &usize| matches!(&graded[*i], Ok(o) if o.cases.iter().any(|c| c.printed_anything()));
    let (printing, quiet): (Vec<usize>, Vec<usize>) = (0..graded.len()).partition(printed);
    [quiet, printing]
}

/// How one submission is checked (its private copy `file`): its GPU full cases left for the
/// second pass.
fn request(args: &Options, puzzle: spec::Puzzle, file: &Path) -> check::Request {
    check::Request {
        puzzle,
        file: file.to_path_buf(),
        backend: args.backend,
        gpu_limit: Duration::from_secs_f64(args.timeout.max(0.1)),
        only_case: None,
        full_later: true,
    }
}

/// `work` on every item, as many at once as there are workers (each thread keeps one), and the
/// answers in the items' order.
fn in_parallel<T: Sync, R: Send>(
    workers: &[Mutex<Worker>],
    items: &[T],
    work: impl Fn(&T, &mut Worker) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for worker in workers {
            s.spawn(|| {
                let mut gpu = worker.lock().expect("no thread panics holding it");
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else {
                        return;
                    };
                    let answer = work(item, &mut gpu);
                    done.lock().expect("no thread panics holding it")[i] = Some(answer);
                }
            });
        }
    });
    done.into_inner()
        .expect("no thread panicked holding it")
        .into_iter()
        .map(|o| o.expect("every item was worked on"))
        .collect()
}

/// A row; a file that never reached its cases (it does not compile) failed every one of them.
fn row(file: String, outcome: &Outcome, cases: usize) -> Row {
    let counted = cases_counted(&outcome.cases);
    let mut kinds: Vec<String> = vec![];
    for d in &outcome.diagnostics {
        let kind = d.kind.name().to_string();
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Row {
        file,
        passed: outcome.passed,
        cases_passed: counted.iter().filter(|c| c.passed).count(),
        cases_total: if counted.is_empty() {
            cases
        } else {
            counted.len()
        },
        diagnostics: kinds,
        message: outcome.diagnostics.first().map(|d| d.message.clone()),
        bench_seconds: None,
    }
}

fn unreadable(file: String, e: &anyhow::Error, cases: usize) -> Row {
    Row {
        file,
        passed: false,
        cases_passed: 0,
        cases_total: cases,
        diagnostics: vec!["unreadable".into()],
        message: Some(format!("{e:#}")),
        bench_seconds: None,
    }
}

/// The cases as the puzzle names them: a shrunk retry of a failing case is not a case of its own.
fn cases_counted(cases: &[CaseResult]) -> Vec<&CaseResult> {
    cases.iter().filter(|c| c.shrunk_from.is_none()).collect()
}

fn table(rows: &[Row]) -> String {
    let width = rows
        .iter()
        .map(|r| r.file.chars().count())
        .max()
        .unwrap_or(0)
        .max(4)
        + 2;
    let mut out = format!(
        "{:<width$}{:<8}{:<8}{:<10}diagnostics\n",
        "file", "passed", "cases", "bench"
    );
    for r in rows {
        let mark = if r.passed { "✓" } else { "✗" };
        let bench = r
            .bench_seconds
            .map(|s| format!("{:.1} µs", s * 1e6))
            .unwrap_or_else(|| "-".into());
        let line = format!(
            "{:<width$}{mark:<8}{:<8}{bench:<10}{}",
            r.file,
            format!("{}/{}", r.cases_passed, r.cases_total),
            r.diagnostics.join(" ")
        );
        out += line.trim_end();
        out += "\n";
    }
    out
}

fn csv(rows: &[Row]) -> String {
    let mut out =
        String::from("file,passed,cases_passed,cases_total,diagnostics,message,bench_seconds\n");
    for r in rows {
        let fields = [
            quote(&r.file),
            r.passed.to_string(),
            r.cases_passed.to_string(),
            r.cases_total.to_string(),
            quote(&r.diagnostics.join(" ")),
            quote(r.message.as_deref().unwrap_or("")),
            r.bench_seconds.map(|s| s.to_string()).unwrap_or_default(),
        ];
        out += &fields.join(",");
        out += "\n";
    }
    out
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; a field a
/// spreadsheet would read as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage
/// return) starts with `'` instead.
fn quote(field: &str) -> String {
    let formula = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let field = if formula {
        format!("'{field}")
    } else {
        field.to_string()
    };
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::outcome::NotRun;

    /// An outcome whose one GPU case printed `lines` lines.
    fn printing(lines: usize) -> anyhow::Result<Outcome> {
        let puzzle = registry::find("puzzle-04").expect("puzzle 04");
        let case = &(puzzle.cases)(spec::Scale::Small)[0];
        let mut result = CaseResult::not_run(case, Backend::Gpu, NotRun::After(String::new()));
        result.printed_more = lines as u64;
        Ok(Outcome::of_gpu(puzzle.id, vec![result], vec![]))
    }

    #[test]
    fn the_submissions_that_printed_get_the_gpu_last() {
        let graded = [
            printing(3),
            printing(0),
            Err(anyhow::anyhow!("unreadable")),
            printing(1),
        ];
        let [quiet, printed] = printing_last(&graded);
        assert_eq!(quiet, [1, 2]);
        assert_eq!(printed, [0, 3]);
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a, b"), "\"a, b\"");
        assert_eq!(quote("say \"hi\"\nthere"), "\"say \"\"hi\"\"\nthere\"");
    }

    #[test]
    fn csv_fields_that_read_as_formulas_are_escaped() {
        assert_eq!(quote("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(quote("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(quote("+1"), "'+1");
        assert_eq!(quote("-2"), "'-2");
        assert_eq!(quote("a=b"), "a=b");
    }
}
