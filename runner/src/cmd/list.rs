//! `runner list`: the puzzles in order, with grade, title, what each teaches, and a mark for the
//! ones this learner has solved.

use crate::{registry, workbook::State};
use colored::Colorize;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn execute(_: Args) -> anyhow::Result<ExitCode> {
    let state = State::load();
    let puzzles = registry::all();
    println!(
        "{:<3}{:<11}{:<7}{:<46}teaches",
        "", "puzzle", "grade", "title"
    );
    for p in &puzzles {
        let mark = if state.is_solved(p.id) {
            "✓".green().to_string()
        } else {
            " ".to_string()
        };
        println!(
            "{mark:<3}{:<11}{:<7}{:<46}{}",
            p.id,
            "★".repeat(p.grade.into()),
            p.title,
            p.teaches.dimmed()
        );
    }
    let solved = puzzles.iter().filter(|p| state.is_solved(p.id)).count();
    println!("\n{solved}/{} solved.", puzzles.len());
    match puzzles.iter().find(|p| !state.is_solved(p.id)) {
        Some(p) => println!("Next: runner check {}", p.id),
        None => println!("All solved: try runner bench on the later puzzles."),
    }
    Ok(ExitCode::SUCCESS)
}
