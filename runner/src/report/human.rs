//! Printing an [`Outcome`] for people (colored, rustlings-style); `json` prints it for scripts.
//!
//! The human report: a ✓ line and the next puzzle on a pass; on a failure, the first failing case,
//! a diff of expected against yours around the first mismatch (values lined up), the diagnostics
//! at their file and line, then the hint command and the chapter.

use super::rerun::Rerun;
use crate::judge::outcome::{Backend, CaseResult, NotRun, Outcome, QuickTiming, fold};
use crate::workbook::registry;
use colored::Colorize;
use spec::Kind;

/// The full case's time from the check's one launch, named for what it is.
fn quick_timing(t: &QuickTiming, puzzle: &str) -> String {
    let share = match t.fma_peak_share {
        Some(share) => format!(", {:.0}% of the FP32 FMA peak", 100.0 * share),
        None => String::new(),
    };
    format!(
        "  case {} on the {}: {:.1} us in one timed launch{share} (a glance: runner bench {puzzle} measures it properly)\n",
        t.case,
        t.device,
        t.seconds * 1e6
    )
}

/// Whom a report is for: how the commands it suggests start, and the check to run again. The
/// caller says it (`cmd` from the command line, Gradescope for a student's own copy); the report
/// reads no process-wide state for it.
#[derive(Clone, Debug, Default)]
pub struct View {
    /// `runner`, or `runner --root DIR` where the reader gave one: every suggested command keeps it.
    pub runner: String,
    /// The check to run again (`Fix it, then run: ...`); none where the caller runs it itself
    /// (`watch`). The `draw it:` commands start from it, or from the puzzle alone.
    pub rerun: Option<Rerun>,
}

/// The report of `outcome` for people, as `view` says: the notes and warnings, what the kernel
/// printed, then the pass (and what is next) or the failure, its diagnostics and what to do.
pub fn human(outcome: &Outcome, view: &View) -> String {
    let mut out = String::new();
    for note in &outcome.notes {
        out += &format!("{}\n", note.dimmed());
    }
    for w in &outcome.warnings {
        out += &format!(
            "{}: {}\n  --> {}:{}\n",
            "warning (NVRTC)".yellow().bold(),
            w.message,
            w.file,
            w.line
        );
    }
    out += &printed(outcome);
    if outcome.passed {
        return out + &passed_lines(outcome, view);
    }
    out += &failure(outcome);
    out += &diagnostic_lines(outcome, view);
    out + &what_next(outcome, view)
}

/// The pass: the ✓ line, the GPU's glance at the time, and the next puzzle.
fn passed_lines(outcome: &Outcome, view: &View) -> String {
    let runner = &view.runner;
    let backends: Vec<&str> = outcome.backends.iter().map(|b| b.name()).collect();
    let backends = if backends.is_empty() {
        "none".to_string()
    } else {
        backends.join(" + ")
    };
    let passed = outcome.cases.iter().filter(|c| c.passed).count();
    let mut out = String::new();
    out += &format!(
        "{} {} passed ({passed}/{} cases, {backends})\n",
        "✓".green().bold(),
        outcome.puzzle.bold(),
        outcome.cases.len()
    );
    if let Some(t) = &outcome.full_case {
        out += &quick_timing(t, &outcome.puzzle);
    }
    match registry::next(&outcome.puzzle) {
        Some(next) => out += &format!("Next: {runner} check {}\n", next.id),
        // `runner bench` times on a GPU, so it is offered only where one ran the cases.
        None if outcome.backends.contains(&Backend::Gpu) => {
            out += &format!("That was the last puzzle: measure it with {runner} bench.\n")
        }
        None => out += "That was the last puzzle.\n",
    }
    out
}

/// The failure: the first failing case (the others, and those a timeout kept from running) and
/// the diff of the easiest to read; or, where no case ran, why.
fn failure(outcome: &Outcome) -> String {
    let passed = outcome.cases.iter().filter(|c| c.passed).count();
    let mut out = String::new();
    let failing: Vec<&CaseResult> = outcome.cases.iter().filter(|c| !c.passed).collect();
    match failing.first() {
        Some(first) => {
            out += &format!(
                "{} {}: case {} failed ({})\n",
                "✗".red().bold(),
                outcome.puzzle.bold(),
                first.name.bold(),
                first.backend.name()
            );
            let (not_run, ran): (Vec<&CaseResult>, Vec<&CaseResult>) =
                failing[1..].iter().partition(|c| c.not_run.is_some());
            if !ran.is_empty() {
                let others: Vec<String> = ran
                    .iter()
                    .map(|c| format!("{} ({})", c.name, c.backend.name()))
                    .collect();
                out += &format!("  also failed: {}\n", others.join(", "));
            }
            // Cases a timeout kept from running count as failed: the total stays the puzzle's.
            if let Some(why) = not_run
                .first()
                .and_then(|c| c.not_run.as_ref().map(NotRun::why))
            {
                let names: Vec<&str> = not_run.iter().map(|c| c.name.as_str()).collect();
                out += &format!(
                    "  not run ({why}), so failed: {}\n  {passed} of {} cases passed\n",
                    names.join(", "),
                    outcome.cases.len()
                );
            }
            // A shrunk version of a failing case is the easiest to read: show its diff.
            let shown = failing
                .iter()
                .find(|c| c.shrunk_from.is_some())
                .unwrap_or(first);
            // No diff when every value is within tolerance (a race that happened to come out right).
            match &shown.diff {
                // Drawn by the GPU worker that judged it, where its arrays are.
                Some(drawn) => out += drawn,
                None => {
                    let tol = registry::find(&outcome.puzzle).map(|z| z.tolerance);
                    out += &crate::judge::diff::diff_of(shown, &tol.expect("a registered puzzle"))
                        .unwrap_or_default();
                }
            }
        }
        None => {
            let why = match outcome.diagnostics.first().map(|d| d.kind) {
                Some(Kind::CompileError) => "the kernel does not compile",
                Some(Kind::KernelNotFound | Kind::SignatureMismatch) => {
                    "the kernel's entry point does not match the puzzle"
                }
                Some(Kind::BadLaunchShape) => {
                    "the launch shape the kernel declares cannot be launched"
                }
                Some(Kind::NvrtcMissing) => "the CUDA compiler library (NVRTC) is not available",
                Some(Kind::IncludeRefused) => "the kernel includes a file outside the submission",
                _ => "no case ran",
            };
            out += &format!(
                "{} {}: {}\n",
                "✗".red().bold(),
                outcome.puzzle.bold(),
                why.bold()
            );
        }
    }
    out
}

/// Each diagnostic at its file, line, block, thread and case, with the command that draws it
/// where a picture helps.
fn diagnostic_lines(outcome: &Outcome, view: &View) -> String {
    let runner = &view.runner;
    let mut out = String::new();
    for d in &outcome.diagnostics {
        out += &format!("{}: {}\n", d.kind.name().red().bold(), d.message);
        let mut at = vec![];
        if let (Some(file), Some(line)) = (&d.file, d.line) {
            at.push(format!("{file}:{line}"));
        }
        match (d.block, d.thread) {
            (Some(b), Some(t)) => at.push(format!(
                "block ({},{},{}) thread ({},{},{})",
                b[0], b[1], b[2], t[0], t[1], t[2]
            )),
            (Some(b), None) => at.push(format!("block ({},{},{})", b[0], b[1], b[2])),
            _ => {}
        }
        if let Some(case) = &d.case {
            at.push(format!("case {case}"));
        }
        if !at.is_empty() {
            out += &format!("  --> {}\n", at.join(", "));
        }
        // Where a picture of who touched what helps, the command that draws it.
        let drawn = matches!(
            d.kind,
            Kind::Race | Kind::UninitializedRead | Kind::OutOfBounds | Kind::PaddingWritten
        );
        if let (true, Some(b), Some(case)) = (drawn, d.block, &d.case)
            && !case.contains(" (")
        {
            let show = match &view.rerun {
                Some(rerun) => rerun.show(case, b),
                None => Rerun::of(runner, &outcome.puzzle).show(case, b),
            };
            out += &format!("  draw it: {show}\n");
        }
    }
    out
}

/// What to read and run next: the kinds' page, the check again, the hint and the chapter.
fn what_next(outcome: &Outcome, view: &View) -> String {
    let runner = &view.runner;
    let mut out = String::new();
    let teaching = |k: Kind| !matches!(k, Kind::WrongOutput | Kind::UnwrittenOutput);
    if outcome.diagnostics.iter().any(|d| teaching(d.kind)) {
        out += "What each kind means: book/src/introduction.md#the-diagnostic-kinds\n";
    }
    if let Some(rerun) = &view.rerun {
        out += &format!("Fix it, then run: {rerun}\n");
    }
    out += &format!("Hint: {runner} hint {}\n", outcome.puzzle);
    out += &format!(
        "Chapter: book/src/{}.md ({runner} book {} builds and opens it)\n",
        outcome.puzzle, outcome.puzzle
    );
    out
}

/// Lines of `printf` output shown; `--json` has every one kept.
const PRINTED_LINES: usize = 20;

/// What the kernel printed in the first case where it printed anything, each line after the thread
/// that printed it (the simulator knows it; a GPU hands back the text alone), and which other cases
/// printed too.
fn printed(outcome: &Outcome) -> String {
    let printing: Vec<&CaseResult> = outcome
        .cases
        .iter()
        .filter(|c| !c.printed.is_empty())
        .collect();
    let Some(first) = printing.first() else {
        return String::new();
    };
    let mut out = format!(
        "Your kernel printed (case {}, {}):\n",
        first.name,
        first.backend.name()
    );
    let mut lines = Vec::new();
    for p in &first.printed {
        let tag = match (p.block, p.thread) {
            (Some(b), Some(t)) => format!(
                "[block ({},{},{}) thread ({},{},{})] ",
                b[0], b[1], b[2], t[0], t[1], t[2]
            ),
            _ => String::new(),
        };
        let text = p.text.strip_suffix('\n').unwrap_or(&p.text);
        for (i, line) in text.split('\n').enumerate() {
            let lead = if i == 0 { tag.as_str() } else { "  " };
            lines.push(format!("  {lead}{line}"));
        }
    }
    let more = lines.len().saturating_sub(PRINTED_LINES) as u64 + first.printed_more;
    for line in lines.iter().take(PRINTED_LINES) {
        out += line;
        out += "\n";
    }
    if more > 0 {
        out += &format!(
            "  ... and {more} more (--json keeps the first {})\n",
            spec::job::PRINTED_MAX
        );
    }
    if printing.len() > 1 {
        let names: Vec<String> = printing[1..]
            .iter()
            .map(|c| format!("{} ({})", c.name, c.backend.name()))
            .collect();
        out += &format!(
            "  printed in other cases too: {} (--case NAME shows one)\n",
            fold(&names, 4)
        );
    }
    out
}

/// Per simulated case, each thread's highest global access counts against the case's budget, and
/// the counts of the budgets of the whole launch or block.
pub fn stats(outcome: &Outcome, budget_of: &dyn Fn(&str) -> Option<spec::Budget>) -> String {
    let of = |n: Option<u32>| {
        n.filter(|&n| n != spec::Budget::NO_LIMIT)
            .map(|n| format!("/{n}"))
            .unwrap_or_default()
    };
    let cases: Vec<_> = outcome
        .cases
        .iter()
        .filter(|c| c.shrunk_from.is_none())
        .filter_map(|c| Some((c, c.stats?, budget_of(&c.name))))
        .collect();
    // Each budget's column where some case has it: products on the CUDA cores per output and the tensor cores' share of the multiply-adds (puzzles 11, 12), shared reads
    // per product (06), reads of the staged input per output (10), a block's reads of its tile
    // (04, 05).
    let products = cases
        .iter()
        .any(|(_, s, _)| s.cuda_products_per_output.is_some());
    let tensor = cases.iter().any(|(_, s, _)| s.tensor_macs.is_some());
    let shared = cases
        .iter()
        .any(|(_, s, _)| s.shared_reads_products.is_some());
    let staged = cases.iter().any(|(_, s, _)| s.staged_reads.is_some());
    let tile = cases.iter().any(|(_, s, _)| s.tile_reads.is_some());
    let column = |on: bool, name: &str, w: usize| {
        if on {
            format!("{name:>w$}")
        } else {
            String::new()
        }
    };
    let note = |on: bool, what: &str| if on { what.to_string() } else { String::new() };
    let mut out = format!(
        "{:<28}{:>10}{:>10}{}{}{}{}{}  (most by any one thread{}{}{}{}{})\n",
        "case",
        "reads",
        "writes",
        column(products, "products/out", 14),
        column(tensor, "tensor share", 14),
        column(shared, "reads/product", 14),
        column(staged, "input/output", 16),
        column(tile, "block/tile", 15),
        note(
            products,
            "; products/out: products on the CUDA cores per output"
        ),
        note(
            tensor,
            "; tensor share: the convolution's multiply-adds the tensor cores did"
        ),
        note(
            shared,
            "; reads/product: shared reads per product, of the launch"
        ),
        note(
            staged,
            "; input/output: reads of input per output, of the launch"
        ),
        note(
            tile,
            "; block/tile: the most input elements one block read, and its tile"
        ),
    );
    for (c, s, budget) in cases {
        let reads = format!("{}{}", s.max_reads, of(budget.map(|b| b.reads)));
        let writes = format!("{}{}", s.max_writes, of(budget.map(|b| b.writes)));
        let per_output = s.cuda_products_per_output.map(|n| {
            let limit = budget.and_then(|b| b.cuda_products_per_output);
            format!("{:>14}", format!("{n}{}", of(limit)))
        });
        let per_output = per_output.unwrap_or_default();
        let share = s.tensor_macs.map(|(done, needed)| {
            format!(
                "{:>14}",
                format!("{:.2}", done as f64 / needed.max(1) as f64)
            )
        });
        let share = share.unwrap_or_default();
        let ratio = |r: u64, f: u64| format!("{:.2}", r as f64 / f.max(1) as f64);
        let per_product = s.shared_reads_products.map(|(r, f)| {
            let limit = budget.and_then(|b| b.shared_reads_per_product);
            let limit = limit.map(|(lr, lf)| format!("/{}", ratio(lr.into(), lf.into())));
            format!("{:>14}", ratio(r, f) + &limit.unwrap_or_default())
        });
        let per_product = per_product.unwrap_or_default();
        let per_out = s.staged_reads.map(|(r, allowed, outs)| {
            format!(
                "{:>16}",
                format!("{}/{}", ratio(r, outs), ratio(allowed, outs))
            )
        });
        let per_out = per_out.unwrap_or_default();
        let block = s
            .tile_reads
            .map(|(most, tile)| format!("{:>15}", format!("{most}/{tile}")));
        let block = block.unwrap_or_default();
        out += &format!(
            "{:<28}{reads:>10}{writes:>10}{per_output}{share}{per_product}{per_out}{block}\n",
            c.name
        );
    }
    out
}
