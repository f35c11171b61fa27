//! `runner list`: the puzzles in order, with grade, title, what each teaches, and a mark for the
//! ones this learner has solved. A solved puzzle whose kernel was edited after it passed is not
//! marked solved: the line says when it last passed and how to check it again.

use crate::workbook::registry;
use crate::workbook::{self, State};
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
    let mut edited = vec![];
    for p in &puzzles {
        let kernel = std::fs::read(workbook::root().join(p.kernel_path())).unwrap_or_default();
        let since = state.edited_since(p.id, &kernel);
        let mark = match since {
            Some(unix) => {
                edited.push((p.id, unix));
                "~".yellow().to_string()
            }
            None if state.is_solved(p.id) => "✓".green().to_string(),
            None => " ".to_string(),
        };
        println!(
            "{mark:<3}{:<11}{:<7}{:<46}{}",
            p.id,
            "★".repeat(p.grade.into()),
            p.title,
            p.teaches.dimmed()
        );
    }
    for (id, unix) in &edited {
        println!(
            "~ {id}: passed on {}, edited since: {} check {id}",
            workbook::date(*unix),
            workbook::runner_command()
        );
    }
    let solved = puzzles.iter().filter(|p| state.is_solved(p.id)).count() - edited.len();
    println!("\n{solved}/{} solved.", puzzles.len());
    match puzzles.iter().find(|p| !state.is_solved(p.id)) {
        Some(p) => println!("Next: {} check {}", crate::workbook::runner_command(), p.id),
        None => println!("All solved: try runner bench on the later puzzles."),
    }
    Ok(ExitCode::SUCCESS)
}
