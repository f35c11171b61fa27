//! The terminal picture of `runner show`: per barrier phase, per buffer and `__shared__` array,
//! a grid of its elements with the threads that read each (one row) and wrote each (another).
//!
//! A cell holds one thread's number, a range `3-9` of threads, or `5×` for that many threads
//! that are not one range; `·` is an element nobody touched in that phase. Reads are cyan and
//! writes yellow where color is on, but nothing depends on color (NO_COLOR): a mark is a
//! character after the cell, `!` a race, `?` a read of a shared word nobody wrote, `X` an access
//! out of bounds (drawn past the array's end where it fell there), `P` a write into a pitched
//! output's padding, and each mark is also a sentence under the picture with its threads and lines.
//! A 2D buffer is drawn by image rows, each under its label, and a `__shared__` array of two or
//! more dimensions by its rows, named as the learner indexes them (`sb[1][0]`).

use crate::show::touches::{Cell, Placed, Touches};
use colored::Colorize;
use sim::observe::MarkKind;

/// The most elements drawn of one area; the rest is summarized.
pub const MAX_ELEMENTS: i64 = 512;

/// The threads of a cell's row as short text.
pub fn who(ids: &[u32]) -> String {
    match ids {
        [] => "·".into(),
        [one] => one.to_string(),
        [first, .., last] if (last - first) as usize + 1 == ids.len() => {
            format!("{first}-{last}")
        }
        _ => format!("{}×", ids.len()),
    }
}

/// The character that marks a cell.
pub fn symbol(kind: MarkKind) -> char {
    match kind {
        MarkKind::Race => '!',
        MarkKind::Uninit => '?',
        MarkKind::OutOfBounds => 'X',
        MarkKind::Padding => 'P',
    }
}

/// The picture, with `title` (the command's context) on top.
pub fn draw(t: &Touches, title: &str, only: Option<&str>) -> String {
    let mut out = format!("{title}\n");
    let [x, y, z] = t.threads;
    let dims = if y * z == 1 {
        format!("{x} threads, numbered by threadIdx.x")
    } else {
        format!(
            "{x}x{y}x{z} threads, numbered threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)"
        )
    };
    out += &format!(
        "block ({},{},{}), {dims}; a cell lists the threads that read (r) or wrote (w) that element\n",
        t.block[0], t.block[1], t.block[2]
    );
    let areas: Vec<usize> = (0..t.areas.len())
        .filter(|&a| only.is_none_or(|n| t.areas[a].name == n))
        .filter(|&a| t.span(a).is_some())
        .collect();
    let n = t.phases.len();
    for (p, phase) in t.phases.iter().enumerate() {
        let from = if p == 0 {
            "from the start".to_string()
        } else {
            match t.phases[p - 1].until {
                Some(l) => format!("after the __syncthreads() on line {l}"),
                None => "after a __syncthreads()".into(),
            }
        };
        let to = match phase.until {
            Some(l) if p + 1 < n => format!("to the __syncthreads() on line {l}"),
            _ if p + 1 < n => "to a __syncthreads()".into(),
            _ => "to the end".into(),
        };
        out += &format!("\nphase {} of {n}: {from} {to}\n", p + 1);
        let mut any = false;
        for &a in &areas {
            if phase.cells[a].is_empty() && !t.marks.iter().any(|m| m.area == a && m.phase == p) {
                continue;
            }
            any = true;
            out += &area(t, a, p);
        }
        if !any {
            out += "  (no accesses)\n";
        }
    }
    let marks = sentences(t, only);
    if !marks.is_empty() {
        out += "\nmarks:\n";
        for (kind, text) in marks {
            out += &format!("  {} {text}\n", symbol(kind).to_string().red().bold());
        }
    }
    out
}

/// The marks' sentences under the picture (of the areas drawn): the first few of each kind in
/// each area, then how many more are marked.
pub fn sentences(t: &Touches, only: Option<&str>) -> Vec<(MarkKind, String)> {
    const SHOWN: usize = 3;
    let drawn = |m: &&Placed| only.is_none_or(|n| t.areas[m.area].name == n);
    let mut out = vec![];
    for (i, m) in t.marks.iter().enumerate().filter(|(_, m)| drawn(m)) {
        let same = |o: &&Placed| o.kind == m.kind && o.area == m.area;
        let before = t.marks[..i].iter().filter(same).count();
        if before < SHOWN {
            out.push((m.kind, format!("{} (phase {})", m.text, m.phase + 1)));
        } else if before == SHOWN {
            let more = t.marks[i..].iter().filter(same).count();
            out.push((
                m.kind,
                format!(
                    "and {more} more in `{}`, each marked {}",
                    t.areas[m.area].name,
                    symbol(m.kind)
                ),
            ));
        }
    }
    out
}

/// One area in one phase: its header, then rows of element indices with their read and write
/// rows under them.
fn area(t: &Touches, a: usize, p: usize) -> String {
    let ar = &t.areas[a];
    let (lo, hi) = t.span(a).expect("drawn areas are touched");
    let hi = hi.min(lo + MAX_ELEMENTS - 1);
    let cells = &t.phases[p].cells[a];
    let empty = Cell::default();
    let text = |i: i64, write: bool| {
        let c = cells.get(&i).unwrap_or(&empty);
        let mut s = who(if write { &c.writers } else { &c.readers });
        if let Some(m) = t.mark_at(a, p, i).filter(|m| m.write == write) {
            if s == "·" {
                s = m.thread.to_string();
            }
            s.push(symbol(m.kind));
        }
        s
    };
    let width = (lo..=hi)
        .flat_map(|i| [text(i, false), text(i, true), i.to_string()])
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(1)
        + 1;
    let per_row = ((96 / width).max(4) / 4 * 4) as i64;
    let kind = if ar.shared { "shared" } else { "global" };
    let mut out = format!("  {} ({kind}, {} elements", ar.name, ar.len);
    if lo > 0 || hi + 1 < ar.len as i64 {
        out += &format!("; drawn: {lo}..{}", hi + 1);
    }
    out += ")\n";
    let reads = cells.values().any(|c| !c.readers.is_empty())
        || t.marks
            .iter()
            .any(|m| m.area == a && m.phase == p && !m.write);
    let writes = cells.values().any(|c| !c.writers.is_empty())
        || t.marks
            .iter()
            .any(|m| m.area == a && m.phase == p && m.write);
    // A 2D buffer (puzzles 09 and 10) is drawn by image rows, each under its label, in the
    // columns this phase touched (a long row goes on in more grid rows).
    let image = ar.columns.filter(|&c| c > 0).map(|c| c as i64);
    let mut segments = vec![];
    match image {
        Some(c) => {
            let touched = cells.keys().copied().chain(
                (t.marks.iter())
                    .filter(|m| m.area == a && m.phase == p)
                    .map(|m| m.index),
            );
            let touched: Vec<i64> = touched.filter(|i| (lo..=hi).contains(i)).collect();
            let first = touched.iter().map(|i| i.rem_euclid(c)).min().unwrap_or(0);
            let last = touched
                .iter()
                .map(|i| i.rem_euclid(c))
                .max()
                .unwrap_or(c - 1);
            for r in lo.div_euclid(c)..=hi.div_euclid(c) {
                let mut at = r * c + first;
                let row = ar.row_name(r).unwrap_or_else(|| format!("image row {r}"));
                let label = format!("   {row} (columns {first}..{})\n", last + 1);
                segments.push((at, (at + per_row - 1).min(r * c + last), Some(label)));
                at += per_row;
                while at <= r * c + last {
                    segments.push((at, (at + per_row - 1).min(r * c + last), None));
                    at += per_row;
                }
            }
        }
        None => {
            let mut row = lo;
            while row <= hi {
                segments.push((row, (row + per_row - 1).min(hi), None));
                row += per_row;
            }
        }
    }
    for (row, end, label) in segments {
        out += &label.unwrap_or_default();
        let pad = |s: String| format!("{s:>width$}");
        out += "     ";
        // A shared array's rows are headed by their last index, as the row label names the rest.
        let head = |i: i64| match image {
            Some(c) if ar.shared && ar.decl.is_some() => i.rem_euclid(c).to_string(),
            _ => i.to_string(),
        };
        out += &(row..=end).map(|i| pad(head(i))).collect::<String>();
        out += "\n";
        for (write, on) in [(false, reads), (true, writes)] {
            if !on {
                continue;
            }
            out += if write { "   w " } else { "   r " };
            for i in row..=end {
                let s = pad(text(i, write));
                let marked = t.mark_at(a, p, i).is_some_and(|m| m.write == write);
                let painted = if marked {
                    s.red().bold()
                } else if s.trim() == "·" {
                    s.dimmed()
                } else if write {
                    s.yellow()
                } else {
                    s.cyan()
                };
                out += &painted.to_string();
            }
            out += "\n";
        }
    }
    if t.span(a).is_some_and(|(_, h)| h > hi) {
        out += &format!(
            "     ... {} more elements not drawn\n",
            t.span(a).map_or(0, |(_, h)| h - hi)
        );
    }
    out
}
