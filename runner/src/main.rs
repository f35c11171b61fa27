//! `runner`: the workbook's command line.
//!
//! One subcommand per file under `cmd/`, each with its `execute`. Exit status (the book's introduction): 0 when
//! everything passed, 1 when a kernel failed, 2 for a usage error. Errors a learner can fix are
//! reported with the file, what happened and the next command; `anyhow` errors reach `main` only
//! for usage problems and are printed with their context.

mod bench;
mod check;
mod classroom;
mod cmd;
mod judge;
mod profile;
mod report;
mod show;
mod workbook;

use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Graded GPU convolution puzzles: write CUDA kernels, check them on a GPU or in a PTX simulator.
#[derive(Debug, Parser)]
#[command(name = "runner", version, propagate_version = true)]
pub struct Cli {
    /// When to color the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    color: ColorChoice,
    /// The workbook's folder (default: the nearest folder upwards holding puzzles/ and book/ or solutions/).
    /// Tests point it at a copy of the workbook.
    #[arg(long, value_name = "DIR", global = true)]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the puzzles with their grades, and which ones you have solved.
    List(cmd::list::Args),
    /// Check a kernel against a puzzle's cases and report what is wrong.
    Check(cmd::check::Args),
    /// Check your kernel each time you save it, and go on to the next puzzle when it passes.
    Watch(cmd::watch::Args),
    /// Time a kernel on the GPU against the device's FMA peak and memory bandwidth.
    Bench(cmd::bench::Args),
    /// Draw which thread read and wrote which element, per barrier phase, for one block (simulator).
    Show(cmd::show::Args),
    /// Count what a kernel asks of the hardware (simulator) and predict its time on an H100.
    Profile(cmd::profile::Args),
    /// Show the next hint for a puzzle (one more each time).
    Hint(cmd::hint::Args),
    /// Build the book and print (or open) a chapter's address.
    Book(cmd::book::Args),
    /// For instructors: every solution passes, every skeleton fails, the book matches the code.
    Validate(cmd::validate::Args),
    /// For instructors: grade a folder of submissions (grade.csv, grade.json, report.html).
    Grade(cmd::grade::Args),
    /// For instructors: write the students' copy (skeletons, runner, book; no solutions).
    Release(cmd::release::Args),
    /// For instructors: Gradescope's autograder (what `run_autograder` calls): grade one
    /// submission's puzzles of a conf into results.json.
    Gradescope(cmd::autograder::Args),
    /// For the workbook's developers: run seeded random kernels on the simulator (and the GPU,
    /// `--backend both`) and report any that disagree; `--seed N --show` reproduces one.
    #[command(hide = true)]
    Fuzz(cmd::fuzz::Args),
    /// Serve GPU jobs (used by `check` to isolate the GPU in a process of its own): from stdin,
    /// or on a Unix socket until a minute passes idle.
    #[command(hide = true)]
    GpuWorker {
        /// The socket to serve on.
        #[arg(long)]
        socket: Option<std::path::PathBuf>,
        /// Build this puzzle's full-scale cases at once, before the first request asks for them.
        #[arg(long)]
        ahead: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.color {
        ColorChoice::Always => colored::control::set_override(true),
        ColorChoice::Never => colored::control::set_override(false),
        ColorChoice::Auto if !std::io::stdout().is_terminal() => {
            colored::control::set_override(false)
        }
        ColorChoice::Auto => {}
    }
    if let Some(dir) = &cli.root
        && let Err(e) = workbook::set_root(dir)
    {
        eprintln!("error: {e:#}");
        return ExitCode::from(2);
    }
    if let (Some(dir), false) = (
        workbook::fallback(),
        matches!(cli.command, Command::GpuWorker { .. }),
    ) {
        eprintln!(
            "note: not inside a workbook (no folder above here holds puzzles/ and book/ or solutions/); using {}, the one this runner was built from (--root DIR picks another)",
            dir.display()
        );
    }
    let result = match cli.command {
        Command::List(args) => cmd::list::execute(args),
        Command::Check(args) => cmd::check::execute(args),
        Command::Watch(args) => cmd::watch::execute(args),
        Command::Hint(args) => cmd::hint::execute(args),
        Command::Show(args) => cmd::show::execute(args),
        Command::Profile(args) => cmd::profile::execute(args),
        Command::Bench(args) => cmd::bench::execute(args),
        Command::Book(args) => cmd::book::execute(args),
        Command::Validate(args) => cmd::validate::execute(args),
        Command::Grade(args) => cmd::grade::execute(args),
        Command::Release(args) => cmd::release::execute(args),
        Command::Gradescope(args) => cmd::autograder::execute(args),
        Command::Fuzz(args) => cmd::fuzz::execute(args),
        Command::GpuWorker { socket, ahead } => match socket {
            Some(path) => gpu::worker::serve_socket(&path, check::resident::HOOKS, ahead),
            None => gpu::worker::serve(check::resident::HOOKS),
        }
        .map(|()| ExitCode::SUCCESS)
        .map_err(Into::into),
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::from(2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
