//! The diff of a wrong case as text: expected against yours around the first mismatch, a line
//! per element (a grid for a 2D output, `grid`). The judge's own rendering, so that the GPU worker,
//! which holds a full case's arrays, draws the same diff the host report would (`check::resident`).

use crate::judge::outcome::CaseResult;
use colored::Colorize;
use similar::{DiffTag, TextDiff};

/// Elements shown around the first mismatch.
const WINDOW: usize = 12;

/// The diff of a wrong case (a grid for a 2D output); `None` when every value is within
/// tolerance.
pub fn diff_of(case: &CaseResult, tol: &spec::Tolerance) -> Option<String> {
    match (case.first_mismatch, case.pitch) {
        (Some(_), Some(p)) => Some(crate::judge::grid::diff(case, p, tol)),
        (Some(first), None) => Some(diff(case, first)),
        _ => None,
    }
}

/// A line-per-element diff of expected against yours, around the first mismatch.
fn diff(case: &CaseResult, first: usize) -> String {
    let start = first.saturating_sub(WINDOW / 4);
    let end = (start + WINDOW).min(case.expected.len());
    // An NHWC output (puzzle 11) names each element as its sentence does.
    let (at, names): (Box<dyn Fn(usize) -> String>, &str) = match case.nhwc {
        Some(shape) => {
            let at = move |i| {
                let [b, r, c, o] = crate::judge::image_place(shape, i);
                format!("({b},{r},{c},{o})")
            };
            let width = (start..end).map(|i| at(i).len()).max().unwrap_or(0);
            (
                Box::new(move |i| format!("{:>width$}", at(i))),
                " as (image, row, column, channel)",
            )
        }
        None => (Box::new(|i| format!("[{i:>4}]")), ""),
    };
    let line = |i: usize, v: String| format!("{} {v:>12}\n", at(i));
    let expected: String = (start..end)
        .map(|i| line(i, format!("{:.4}", case.expected[i])))
        .collect();
    let yours: String = (start..end)
        .map(|i| line(i, format!("{:.4}", case.output[i])))
        .collect();
    let mut out = format!(
        "  {} {} element{}, showing [{start}..{end}){names}; {} expected, {} yours:\n",
        case.name.dimmed(),
        case.expected.len(),
        if case.expected.len() == 1 { "" } else { "s" },
        "-".red(),
        "+".green()
    );
    // Changed runs are shown element by element (expected, then yours) so each pair lines up.
    let diff = TextDiff::from_lines(&expected, &yours);
    let (old, new): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), yours.lines().collect());
    for op in diff.ops() {
        let (_, old_range, new_range) = op.as_tag_tuple();
        if op.tag() == DiffTag::Equal {
            for line in &old[old_range] {
                out += &format!("    {line}\n");
            }
            continue;
        }
        for k in 0..old_range.len().max(new_range.len()) {
            if let Some(line) = old.get(old_range.start + k).filter(|_| k < old_range.len()) {
                out += &format!("  {} {}\n", "-".red(), line.red());
            }
            if let Some(line) = new.get(new_range.start + k).filter(|_| k < new_range.len()) {
                out += &format!("  {} {}\n", "+".green(), line.green());
            }
        }
    }
    out
}
