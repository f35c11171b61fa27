//! The SVG picture of `runner show` (`--svg FILE`), for the book and for a browser.
//!
//! The same model as the terminal picture (`touches`): per barrier phase, per area, one square
//! per element, its upper half the threads that read it (cyan when any did), its lower half the
//! threads that wrote it (yellow), a red frame and symbol for a mark, and the marks' sentences
//! at the bottom. A 1D buffer wraps every [`PER_ROW`] elements, with the first index of each row
//! at its left; a 2D buffer (one whose row length is known) is drawn row by row, as the image it
//! holds. Every coordinate stays inside the `viewBox`, which is the image's size.

use crate::show::picture::{MAX_ELEMENTS, sentences, symbol, who};
use crate::show::touches::{Cell, Touches};
use std::fmt::Write;

/// Elements per row of a 1D buffer.
pub const PER_ROW: i64 = 24;
const CELL_W: i64 = 40;
const CELL_H: i64 = 32;
const LEFT: i64 = 64;
const LINE: i64 = 18;

/// Text safe inside an SVG element or attribute.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

struct Canvas {
    body: String,
    y: i64,
    width: i64,
}

impl Canvas {
    fn text(&mut self, x: i64, size: i64, weight: &str, s: &str) {
        self.y += LINE;
        let _ = writeln!(
            self.body,
            r#"<text x="{x}" y="{}" font-size="{size}" font-weight="{weight}">{}</text>"#,
            self.y - 5,
            esc(s)
        );
        // A monospace glyph is about 0.6 of the font size wide.
        self.width = self
            .width
            .max(x + (s.chars().count() as i64 * size * 6 + 9) / 10 + 10);
    }
}

/// The picture as an SVG document.
pub fn draw(t: &Touches, title: &str, only: Option<&str>) -> String {
    let mut c = Canvas {
        body: String::new(),
        y: 6,
        width: LEFT + PER_ROW * CELL_W + 10,
    };
    c.text(10, 14, "bold", title);
    c.text(
        10,
        12,
        "normal",
        &format!(
            "block ({},{},{}): upper half of a square = threads that read the element, lower half = threads that wrote it",
            t.block[0], t.block[1], t.block[2]
        ),
    );
    for (p, phase) in t.phases.iter().enumerate() {
        c.y += 8;
        let until = match phase.until {
            Some(l) if p + 1 < t.phases.len() => {
                format!(" (until the __syncthreads() on line {l})")
            }
            _ => String::new(),
        };
        c.text(
            10,
            13,
            "bold",
            &format!("phase {} of {}{until}", p + 1, t.phases.len()),
        );
        for a in 0..t.areas.len() {
            let ar = &t.areas[a];
            let Some((lo, hi)) = t.span(a) else { continue };
            if only.is_some_and(|n| n != ar.name)
                || phase.cells[a].is_empty() && !t.marks.iter().any(|m| m.area == a && m.phase == p)
            {
                continue;
            }
            let kind = if ar.shared { "shared" } else { "global" };
            c.text(
                10,
                12,
                "normal",
                &format!("{} ({kind}, {} elements)", ar.name, ar.len),
            );
            let hi = hi.min(lo + MAX_ELEMENTS - 1);
            // A 2D buffer keeps its rows (whole rows, from the first touched); 1D ones wrap.
            let (first, per_row) = match ar.columns.filter(|&w| w > 0 && w as i64 <= 2 * PER_ROW) {
                Some(w) => (lo - lo.rem_euclid(w as i64), w as i64),
                None => (lo, PER_ROW),
            };
            let mut row = first;
            while row <= hi {
                let top = c.y + 4;
                let label = match ar.columns {
                    // A row by its declared name (`sb[1][0]`), or the image's, as the text does.
                    Some(w) if per_row == w as i64 => ar
                        .row_name(row / per_row)
                        .unwrap_or_else(|| format!("image row {}", row / per_row)),
                    _ => row.to_string(),
                };
                let _ = writeln!(
                    c.body,
                    r#"<text x="10" y="{}" font-size="10">{}</text>"#,
                    top + 20,
                    esc(&label)
                );
                for i in row..(row + per_row).min(hi + 1) {
                    if i < lo {
                        continue;
                    }
                    let x = LEFT + (i - row) * CELL_W;
                    cell(&mut c.body, t, a, p, i, x, top, phase.cells[a].get(&i));
                }
                c.width = c.width.max(LEFT + per_row * CELL_W + 10);
                c.y = top + CELL_H + 2;
                row += per_row;
            }
        }
    }
    let marks: Vec<String> = sentences(t, only)
        .into_iter()
        .map(|(kind, text)| format!("{} {text}", symbol(kind)))
        .collect();
    if !marks.is_empty() {
        c.y += 8;
        c.text(10, 12, "bold", "marks");
        for m in marks {
            c.text(10, 11, "normal", &m);
        }
    }
    let (w, h) = (c.width, c.y + 10);
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="monospace">
<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>
{}</svg>
"##,
        c.body
    )
}

/// One element's square at (`x`, `y`): readers above, writers below, a mark framed in red.
#[allow(clippy::too_many_arguments)]
fn cell(
    out: &mut String,
    t: &Touches,
    a: usize,
    p: usize,
    i: i64,
    x: i64,
    y: i64,
    c: Option<&Cell>,
) {
    let empty = Cell::default();
    let c = c.unwrap_or(&empty);
    let _ = writeln!(
        out,
        r#"<g><title>element {i}: read by {}, written by {}</title>"#,
        esc(&who(&c.readers)),
        esc(&who(&c.writers))
    );
    let half = CELL_H / 2;
    let halves = [(&c.readers, "#b3e5fc", 0), (&c.writers, "#ffe082", half)];
    for (ids, fill, dy) in halves {
        let fill = if ids.is_empty() { "#f5f5f5" } else { fill };
        let _ = writeln!(
            out,
            r##"<rect x="{x}" y="{}" width="{CELL_W}" height="{half}" fill="{fill}" stroke="#9e9e9e" stroke-width="0.5"/>"##,
            y + dy
        );
        if !ids.is_empty() {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" font-size="10" text-anchor="middle">{}</text>"#,
                x + CELL_W / 2,
                y + dy + 12,
                esc(&who(ids))
            );
        }
    }
    if let Some(m) = t.mark_at(a, p, i) {
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#d32f2f" stroke-width="2"/>"##,
            x + 1,
            y + 1,
            CELL_W - 2,
            CELL_H - 2
        );
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="11" font-weight="bold" fill="#d32f2f">{}</text>"##,
            x + 3,
            y + CELL_H - 4,
            esc(&symbol(m.kind).to_string())
        );
    }
    out.push_str("</g>\n");
}
