//! `runner show [puzzle]`: draw which thread read and wrote which element, for one block of one
//! case, per barrier phase, on the simulator (no GPU needed).
//!
//! The case is `--case NAME`, or else the smallest case (by its work) that fails, or else the
//! first case (the book's example). The block is `--block X[,Y[,Z]]`, or else the block of the
//! case's first diagnostic, or else block 0. The picture comes from the simulator's observer
//! (`touches`), in the terminal (`picture`) and, with `--svg FILE`, as an image (`svg`). Exit
//! status 0 once drawn (a failing kernel too: the picture is the point), 1 when the kernel does
//! not compile or run at all, 2 for a usage error.

use super::KernelChoice;
use crate::check::{self, Backend};
use crate::judge;
use crate::show::touches::{Extent, Recorder};
use crate::show::{picture, svg};
use crate::workbook::install;
use spec::{Arg, Case, Diagnostic, Puzzle, RunOutput, Scale};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: KernelChoice,
    /// The case to draw (default: the smallest failing case, else the first example).
    #[arg(long, value_name = "NAME")]
    case: Option<String>,
    /// The block to draw, as X, X,Y or X,Y,Z (default: where the case's first diagnostic is,
    /// else block 0).
    #[arg(long, value_name = "X,Y", value_parser = parse_block)]
    block: Option<[u32; 3]>,
    /// Draw only this buffer or `__shared__` array.
    #[arg(long, value_name = "NAME")]
    buffer: Option<String>,
    /// Also write the picture as an SVG image to FILE (2D buffers drawn as 2D).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

fn parse_block(s: &str) -> anyhow::Result<[u32; 3]> {
    let parts: Vec<u32> = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<u32>()
                .map_err(|e| anyhow::anyhow!("`{p}`: {e}"))
        })
        .collect::<Result<_, _>>()?;
    match parts[..] {
        [x] => Ok([x, 0, 0]),
        [x, y] => Ok([x, y, 0]),
        [x, y, z] => Ok([x, y, z]),
        _ => Err(anyhow::anyhow!("give the block as X, X,Y or X,Y,Z")),
    }
}

/// One case run on the simulator with the launch the kernel declares, judged.
struct Ran {
    case: Case,
    ptx: String,
    passed: bool,
    diagnostics: Vec<Diagnostic>,
}

fn run(puzzle: &Puzzle, code: &str, file: &str, case: &Case) -> Result<Ran, Diagnostic> {
    let case = check::with_declared_launch(puzzle, code, file, case)?;
    let ptx = check::ptx(code, file, &case.macros)?;
    let opts = check::sim_options(code, &case.macros);
    let out: RunOutput = sim::run_with(&ptx, &case.job, &opts);
    let (result, diagnostics) = judge::judge(puzzle, &case, Backend::Sim, out);
    Ok(Ran {
        passed: result.passed,
        case,
        ptx,
        diagnostics,
    })
}

pub fn execute(args: Args) -> anyhow::Result<ExitCode> {
    let (puzzle, path) = args.target.resolve()?;
    let file = crate::workbook::display(&path);
    let (code, warning) = crate::workbook::source_text::read(&path, &file)?;
    warning.iter().for_each(|w| eprintln!("{w}"));
    let cases = (puzzle.cases)(Scale::Small);
    let fail = |d: Diagnostic| {
        println!("{}: {}", d.kind.name(), d.message);
        Ok(ExitCode::from(1))
    };
    if let Err(d) = install::ensure_nvrtc() {
        return fail(d);
    }
    let ran = match &args.case {
        Some(name) => {
            let Some(case) = cases.iter().find(|c| &c.name == name) else {
                let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
                anyhow::bail!(
                    "{} has no case `{name}`; its cases are: {}",
                    puzzle.id,
                    names.join(", ")
                );
            };
            run(&puzzle, &code, &file, case)
        }
        None => smallest_failing(&puzzle, &code, &file, &cases),
    };
    let ran = match ran {
        Ok(r) => r,
        Err(d) => return fail(d),
    };
    let job = &ran.case.job;
    let block = args
        .block
        .or_else(|| ran.diagnostics.iter().find_map(|d| d.block))
        .unwrap_or([0; 3]);
    if (0..3).any(|d| block[d] >= job.launch.grid[d]) {
        let g = job.launch.grid;
        anyhow::bail!(
            "case {} has no block ({},{},{}): its grid is {}x{}x{} blocks",
            ran.case.name,
            block[0],
            block[1],
            block[2],
            g[0],
            g[1],
            g[2]
        );
    }
    let mut rec = Recorder::new(block, job.launch.grid, lengths(job));
    // The checks' options, `%nsmid` 1 included: a persistent kernel's block 0 then does every
    // tile, as in the run `runner check` diagnosed, so the races it names are the ones drawn
    // (told 132 SMs, a small case's blocks would get a tile each, and a race between two tiles
    // of one block would not happen here).
    // The learner's declarations too, so that shared arrays are drawn and marked by their
    // declared elements (`sab[1]` of a `float2` array is its 8 bytes, `sb[1][0][2]`).
    let opts = check::sim_options(&code, &ran.case.macros);
    sim::run_observed(&ran.ptx, job, &opts, &mut rec);
    let touches = rec.touches;
    if let Some(name) = &args.buffer
        && !touches.areas.iter().any(|a| &a.name == name)
    {
        let names: Vec<&str> = touches.areas.iter().map(|a| a.name.as_str()).collect();
        anyhow::bail!(
            "the kernel has no buffer or __shared__ array `{name}`; it has: {}",
            names.join(", ")
        );
    }
    let params: Vec<String> = ran
        .case
        .params()
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let verdict = if ran.passed {
        "passes".to_string()
    } else {
        let mut kinds: Vec<&str> = ran.diagnostics.iter().map(|d| d.kind.name()).collect();
        kinds.dedup();
        format!("fails: {}", kinds.join(", "))
    };
    let title = format!(
        "{} {}, case {} ({}): {verdict}",
        puzzle.id,
        file,
        ran.case.name,
        params.join(", ")
    );
    print!(
        "{}",
        picture::draw(&touches, &title, args.buffer.as_deref())
    );
    if let Some(out) = &args.svg {
        std::fs::write(out, svg::draw(&touches, &title, args.buffer.as_deref()))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The smallest case (by its work) that fails, else the first case.
fn smallest_failing(
    puzzle: &Puzzle,
    code: &str,
    file: &str,
    cases: &[Case],
) -> Result<Ran, Diagnostic> {
    let mut order: Vec<&Case> = cases.iter().collect();
    order.sort_by_key(|c| c.job.work);
    for case in order {
        let ran = run(puzzle, code, file, case)?;
        if !ran.passed {
            return Ok(ran);
        }
    }
    run(puzzle, code, file, &cases[0])
}

/// Each global buffer's length, and its rows where it is 2D.
fn lengths(job: &spec::Job) -> Vec<Extent> {
    job.args
        .iter()
        .filter_map(|a| match a {
            // A 2D puzzle's image rows are `input_stride` floats apart.
            Arg::Input { name, data } => Some(Extent {
                name: name.clone(),
                len: data.len(),
                columns: job
                    .scalar("input_stride")
                    .filter(|_| name == "input")
                    .map(|s| s as usize),
                padding_from: None,
            }),
            Arg::Output { name, len } => Some(Extent {
                name: name.clone(),
                len: *len,
                columns: None,
                padding_from: None,
            }),
            Arg::Pitched {
                name,
                rows,
                cols,
                stride,
            } => Some(Extent {
                name: name.clone(),
                len: rows * stride,
                columns: Some(*stride),
                padding_from: Some(*cols),
            }),
            Arg::I32 { .. } => None,
        })
        .collect()
}
