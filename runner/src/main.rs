//! `runner`: the workbook's command line.
//!
//! One subcommand per file under `cmd/`, each with its `execute`. Exit status (DESIGN.md): 0 when
//! everything passed, 1 when a kernel failed, 2 for a usage error. Errors a learner can fix are
//! reported with the file, what happened and the next command; `anyhow` errors reach `main` only
//! for usage problems and are printed with their context.

mod cmd;
mod engine;
mod registry;
mod report;
mod toolchain;
mod workbook;

use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::process::ExitCode;

/// Graded GPU convolution puzzles: write CUDA kernels, check them on a GPU or in a PTX simulator.
#[derive(Debug, Parser)]
#[command(name = "runner", version, propagate_version = true)]
pub struct Cli {
    /// When to color the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    color: ColorChoice,
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
    /// Show the next hint for a puzzle (one more each time).
    Hint(cmd::hint::Args),
    /// Run one GPU job from stdin (used by `check` to isolate the GPU in a child process).
    #[command(hide = true)]
    GpuWorker,
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
    let result = match cli.command {
        Command::List(args) => cmd::list::execute(args),
        Command::Check(args) => cmd::check::execute(args),
        Command::Hint(args) => cmd::hint::execute(args),
        Command::GpuWorker => kernels::worker::serve()
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
