//! `runner book [puzzle]`: builds the book through mdBook's library into `book/build` and prints
//! the address of the puzzle's chapter (or of the book's first page); `--open` opens it with the
//! system's opener when there is one. The learner needs no separate mdBook install.

use crate::classroom::book;
use crate::workbook::{self, registry};
use anyhow::anyhow;
use std::process::{Command, ExitCode, Stdio};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The puzzle whose chapter to show, e.g. puzzle-03 (the book's first page when none).
    puzzle: Option<String>,
    /// Open the page in a browser.
    #[arg(long)]
    open: bool,
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let page = match &args.puzzle {
        Some(name) => {
            let p = registry::find(name)?;
            format!("{}.html", p.id)
        }
        None => "index.html".to_string(),
    };
    let build_dir = book::build(&workbook::root())?;
    if !build_dir.join(&page).is_file() {
        anyhow::bail!(
            "the book was built into {} but has no {page}: is the chapter listed in book/src/SUMMARY.md?",
            build_dir.display()
        );
    }
    let url = book::page_url(&build_dir, &page);
    println!("{url}");
    if args.open
        && let Err(why) = open(&url)
    {
        eprintln!("could not open it ({why}): open the address above in a browser");
    }
    Ok(ExitCode::SUCCESS)
}

/// Hands `url` to the system's opener, without waiting for the browser.
fn open(url: &str) -> anyhow::Result<()> {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| anyhow!("{program}: {e}"))
}
