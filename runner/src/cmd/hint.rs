//! `runner hint [puzzle]`: the next of the puzzle's staged hints, one more each time it is run.

use crate::workbook::State;
use colored::Colorize;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The puzzle, e.g. puzzle-03 (or 3); without one, the first you have not solved.
    puzzle: Option<String>,
    /// Show every hint at once.
    #[arg(long)]
    all: bool,
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let puzzle = super::puzzle_or_current(args.puzzle.as_deref())?;
    let mut state = State::load();
    let shown = state.hints_shown.get(puzzle.id).copied().unwrap_or(0);
    let upto = if args.all {
        puzzle.hints.len()
    } else {
        (shown + 1).min(puzzle.hints.len())
    };
    for (n, hint) in puzzle.hints.iter().enumerate().take(upto) {
        let label = format!("Hint {}/{}", n + 1, puzzle.hints.len());
        let label = if n + 1 == upto {
            label.bold()
        } else {
            label.dimmed()
        };
        println!("{label}: {hint}");
    }
    if upto < puzzle.hints.len() {
        println!(
            "Run `{} hint {}` again for the next hint.",
            crate::workbook::runner_command(),
            puzzle.id
        );
    } else {
        println!(
            "That was the last hint; the chapter has the full reasoning: book/src/{}",
            puzzle.chapter_file()
        );
    }
    state.hints_shown.insert(puzzle.id.to_string(), upto);
    state.save();
    Ok(ExitCode::SUCCESS)
}
