//! The report's charts, as inline SVG: a column chart (a histogram over ordered bins) and a bar
//! chart (counts of named things, the largest first). Every bar is a link to the rows behind it.
//! Colours come from the page's CSS (classes `bar`, `axis`, `mark`, ...), so the charts follow
//! the light and dark schemes and print in the light one; every coordinate stays inside the
//! `viewBox`, whose width the page scales to its column.

use std::fmt::Write;

/// One bar: its label under or beside it, its height, and where it links to (an empty bar of
/// a column chart links nowhere).
pub struct Bar {
    pub label: String,
    pub value: usize,
    pub href: String,
    /// A class of its own besides `bar` (`pass`, `fail`), for its colour.
    pub class: &'static str,
}

/// A vertical line across a column chart, at `at` bins from its left edge (a fraction allowed).
pub struct Mark {
    pub at: f64,
    pub label: String,
    pub class: &'static str,
}

/// Text safe inside an SVG or HTML element or attribute.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const W: f64 = 640.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 16.0;
const PLOT_H: f64 = 150.0;

/// A column chart with `id`: one column per bar, left to right, labelled under the axis
/// (`x_label` below them), counts up the side, and `marks` drawn across it with their labels.
pub fn columns(id: &str, title: &str, bars: &[Bar], x_label: &str, marks: &[Mark]) -> String {
    let n = bars.len().max(1) as f64;
    let top = bars.iter().map(|b| b.value).max().unwrap_or(0).max(1);
    let marks_h = 16.0 * marks.len() as f64;
    let plot_top = TOP + marks_h;
    let height = plot_top + PLOT_H + 44.0;
    let slot = (W - LEFT - RIGHT) / n;
    let y = |v: f64| plot_top + PLOT_H - PLOT_H * v / top as f64;
    let mut svg = open(id, title, height);
    // The count axis: 0, the top, and the half where it is a whole number.
    let ticks: Vec<usize> = [0, top / 2, top]
        .into_iter()
        .filter(|&t| t == 0 || t == top || top % 2 == 0)
        .collect();
    for t in ticks {
        let ty = y(t as f64);
        let _ = writeln!(
            svg,
            r#"<line class="grid" x1="{LEFT}" y1="{ty:.1}" x2="{:.1}" y2="{ty:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{t}</text>"#,
            W - RIGHT,
            LEFT - 6.0,
            ty + 4.0
        );
    }
    // Label every bin where the labels fit (a glyph of the 11 px font is under 7 px wide, and
    // a gap of 8 between labels), else every k-th.
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let every = ((longest * 7.0 + 8.0) / slot).ceil().max(1.0) as usize;
    for (i, b) in bars.iter().enumerate() {
        let x = LEFT + slot * i as f64;
        // An empty bin has nothing behind it: no bar, no link.
        if b.value > 0 {
            let h = PLOT_H * b.value as f64 / top as f64;
            let _ = write!(
                svg,
                r##"<a href="#{}"><title>{}: {}</title><rect class="bar {}" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/><text class="count" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text></a>"##,
                esc(&b.href),
                esc(&b.label),
                b.value,
                b.class,
                x + slot * 0.1,
                y(b.value as f64),
                slot * 0.8,
                h.max(1.0),
                x + slot / 2.0,
                y(b.value as f64) - 3.0,
                b.value
            );
        }
        if i % every == 0 {
            let _ = write!(
                svg,
                r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                x + slot / 2.0,
                plot_top + PLOT_H + 14.0,
                esc(&b.label)
            );
        }
        svg += "\n";
    }
    let _ = writeln!(
        svg,
        r#"<line class="axis" x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        plot_top + PLOT_H,
        W - RIGHT,
        plot_top + PLOT_H,
        LEFT + (W - LEFT - RIGHT) / 2.0,
        height - 6.0,
        esc(x_label)
    );
    for (k, m) in marks.iter().enumerate() {
        let mx = (LEFT + slot * m.at).clamp(LEFT, W - RIGHT);
        let ly = TOP + 16.0 * k as f64;
        // The label on the side of the line with more room.
        let (anchor, dx) = if mx > W / 2.0 {
            ("end", -4.0)
        } else {
            ("start", 4.0)
        };
        let _ = writeln!(
            svg,
            r#"<line class="mark {}" x1="{mx:.1}" y1="{:.1}" x2="{mx:.1}" y2="{:.1}"/><text class="mark-label {}" x="{:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
            m.class,
            ly - 2.0,
            plot_top + PLOT_H,
            m.class,
            mx + dx,
            ly + 8.0,
            esc(&m.label)
        );
    }
    svg + "</svg>\n"
}

/// A bar chart with `id`: one horizontal bar per entry, top to bottom, its label at its left and
/// its count at its end.
pub fn bars(id: &str, title: &str, bars: &[Bar]) -> String {
    const ROW: f64 = 22.0;
    const LABEL_W: f64 = 210.0;
    let top = bars.iter().map(|b| b.value).max().unwrap_or(0).max(1);
    let height = TOP + ROW * bars.len() as f64 + 8.0;
    let span = W - LABEL_W - RIGHT - 40.0;
    let mut svg = open(id, title, height);
    for (i, b) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let w = (span * b.value as f64 / top as f64).max(1.0);
        let label: String = if b.label.chars().count() > 32 {
            b.label.chars().take(31).collect::<String>() + "…"
        } else {
            b.label.clone()
        };
        let _ = writeln!(
            svg,
            r##"<a href="#{}"><title>{}: {}</title><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text><rect class="bar {}" x="{LABEL_W}" y="{:.1}" width="{w:.1}" height="{:.1}"/><text class="count" x="{:.1}" y="{:.1}">{}</text></a>"##,
            esc(&b.href),
            esc(&b.label),
            b.value,
            LABEL_W - 6.0,
            y + ROW * 0.65,
            esc(&label),
            b.class,
            y + 3.0,
            ROW - 6.0,
            LABEL_W + w + 4.0,
            y + ROW * 0.65,
            b.value
        );
    }
    svg + "</svg>\n"
}

fn open(id: &str, title: &str, height: f64) -> String {
    format!(
        r#"<svg class="chart" id="{}" role="img" aria-labelledby="{}-title" viewBox="0 0 {W} {height:.0}" xmlns="http://www.w3.org/2000/svg"><title id="{}-title">{}</title>
"#,
        esc(id),
        esc(id),
        esc(id),
        esc(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, value: usize) -> Bar {
        Bar {
            label: label.into(),
            value,
            href: format!("to-{label}"),
            class: "pass",
        }
    }

    /// Every number in an attribute of `svg`'s elements, by attribute name.
    fn coordinates(svg: &str, attr: &str) -> Vec<f64> {
        let key = format!(" {attr}=\"");
        svg.match_indices(&key)
            .map(|(i, _)| {
                let rest = &svg[i + key.len()..];
                rest[..rest.find('"').unwrap()].parse::<f64>().unwrap()
            })
            .collect()
    }

    #[test]
    fn every_bar_links_and_stays_inside_the_view() {
        let bars_: Vec<Bar> = (0..13).map(|i| bar(&i.to_string(), i % 5)).collect();
        let marks = [Mark {
            at: 20.0,
            label: "past the end".into(),
            class: "floor",
        }];
        let svg = columns("c", "t & <cases>", &bars_, "cases passed", &marks);
        // The 13 bins less the 3 empty ones (0, 5, 10) link to their rows.
        assert_eq!(svg.matches("<a href=\"#to-").count(), 10);
        assert!(svg.contains("t &amp; &lt;cases&gt;"));
        let height: f64 = svg.split("viewBox=\"0 0 640 ").nth(1).unwrap()[..3]
            .trim_end_matches('"')
            .parse()
            .unwrap();
        for x in coordinates(&svg, "x")
            .into_iter()
            .chain(coordinates(&svg, "x1"))
        {
            assert!((0.0..=W).contains(&x), "{x}");
        }
        for y in coordinates(&svg, "y")
            .into_iter()
            .chain(coordinates(&svg, "y2"))
        {
            assert!((0.0..=height).contains(&y), "{y}");
        }
        let horizontal = bars(
            "b",
            "kinds",
            &[
                bar("race", 3),
                bar("a very long kind name of many words", 1),
            ],
        );
        assert_eq!(horizontal.matches("<rect").count(), 2);
        assert!(horizontal.contains("a very long kind name of many w…"));
    }
}
