//! `runner check [puzzle]`: compile the learner's kernel, run every case, report what is wrong.
//!
//! `--solution` checks the reference solution and `--kernel FILE` any file (an instructor grading a
//! submission); `--json` prints the contract of the book's introduction. Passing with the learner's own file marks
//! the puzzle solved for `runner list`.

use super::KernelChoice;
use crate::check::{self, BackendChoice};
use crate::report::gradescope::{self, Scoring};
use crate::report::{self, Rerun, View, json};
use crate::workbook;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const DEFAULT_TIMEOUT: f64 = 10.0;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelChoice,
    /// Where to run the cases.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Print one JSON object instead of the report (one line; passing cases without their arrays).
    #[arg(long)]
    json: bool,
    /// With --json: indent it for people.
    #[arg(long, requires = "json")]
    pretty: bool,
    /// With --json: every case's output and expected arrays, passing or not.
    #[arg(long, requires = "json")]
    full: bool,
    /// Run only this case (names as the report prints them, e.g. random-2).
    #[arg(long, value_name = "NAME")]
    case: Option<String>,
    /// Also print, per simulated case, the most global reads and writes of any one thread.
    #[arg(long)]
    stats: bool,
    /// Seconds a GPU case may run before it is stopped.
    #[arg(long, default_value_t = DEFAULT_TIMEOUT, value_name = "SECONDS")]
    timeout: f64,
    /// Also write Gradescope's results.json here (added to the file when it exists, so one file
    /// can hold several puzzles).
    #[arg(long, value_name = "FILE")]
    gradescope: Option<PathBuf>,
    /// Also run the cases a grade drew from this seed (grade.json's `seed`): the check `runner
    /// grade --seed N` made of this file. Without it, the published cases only, the same every
    /// time.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    #[command(flatten)]
    scoring: Scoring,
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let (puzzle, file) = args.target.resolve()?;
    let puzzle = args.seed.map_or(puzzle, |seed| puzzle.drawn(seed));
    let own_file = args.target.is_own();
    // The text checked, recorded with a pass (a save during the check must not count as passing).
    let text = std::fs::read(&file).unwrap_or_default();
    let req = check::Request {
        puzzle,
        file,
        backend: args.backend,
        gpu_limit: Duration::from_secs_f64(args.timeout.max(0.1)),
        only_case: args.case.clone(),
        full_later: false,
    };
    let evaluate = gpu::trace::phase("evaluate (every phase above)");
    let outcome = match check::evaluate(&req, &mut check::gpu_worker()) {
        Ok(outcome) => outcome,
        Err(e) => {
            // An autograder still gets its results: the file it could not check scores nothing.
            if let Some(path) = &args.gradescope {
                let why = format!("{e:#} (expected a file named {}.cu)", puzzle.id);
                gradescope::write(path, args.scoring.not_checked(puzzle.id, &why))?;
            }
            return Err(e);
        }
    };
    drop(evaluate);
    let reporting = gpu::trace::phase("report");
    let view = View {
        runner: workbook::runner_command(),
        rerun: Some(rerun(&args, puzzle.id)),
    };
    let report = if args.json {
        let style = json::Style {
            pretty: args.pretty,
            full: args.full,
        };
        json::render(&outcome, &puzzle, style) + "\n"
    } else if args.stats {
        // A puzzle's budget, or (puzzle 05) each case's own.
        let cases = (puzzle.cases)(spec::Scale::Small);
        let budget_of = |name: &str| {
            let case = cases.iter().find(|c| c.name == name);
            case.and_then(|c| c.job.budget).or(puzzle.budget)
        };
        report::stats(&outcome, &budget_of) + &report::human(&outcome, &view)
    } else {
        report::human(&outcome, &view)
    };
    if let Some(path) = &args.gradescope {
        gradescope::write(path, args.scoring.results(&outcome))?;
    }
    // A closed pipe (`runner check ... | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(report.as_bytes());
    drop(reporting);
    if outcome.passed && own_file {
        let mut state = workbook::State::load();
        state.mark_solved(puzzle.id, &text);
        state.save();
    }
    Ok(if outcome.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `runner check ...` with the options given (`--root` and every option of `check` that changes
/// what it runs or prints, except `--json`, which is for scripts), the puzzle by its id when none
/// was typed.
fn rerun(args: &Args, id: &str) -> Rerun {
    Rerun {
        runner: workbook::runner_command(),
        puzzle: args.target.puzzle.clone().unwrap_or_else(|| id.to_string()),
        solution: args.target.solution_option(),
        kernel: args.target.kernel.clone(),
        case: args.case.clone(),
        backend: (args.backend != BackendChoice::Auto)
            .then(|| format!("{:?}", args.backend).to_lowercase()),
        stats: args.stats,
        timeout: (args.timeout != DEFAULT_TIMEOUT).then_some(args.timeout),
    }
}
