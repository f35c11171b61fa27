//! `report.html`: the aggregates of one or more puzzles' classes as one self-contained page.
//!
//! Everything is in the file: the CSS in a `<style>`, the charts as inline SVG (`chart`), no
//! script, no font or image fetched. A Content-Security-Policy meta tag (`default-src 'none'`)
//! makes a browser refuse any request the page would make, so a change that adds one shows in
//! the browser's log (the test `class_report` loads the page in headless Chromium). The colours
//! are CSS variables with a dark set under `prefers-color-scheme: dark`; print takes the light
//! set, keeps each figure on one page, and prints each link's target.
//!
//! Every figure links to the rows behind it: a bar to a list of its submissions just under the
//! figure, each submission to its row in the table at the bottom of the page. Ids are
//! `{puzzle}-...`, so several puzzles share a page.

use super::aggregate::{Class, Speed};
use super::chart::{self, Bar, Mark, esc};
use std::fmt::Write;

const STYLE: &str = r#"
:root { --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --pass: #2da44e;
  --fail: #cf222e; --bar: #0969da; --ref: #8250df; --floor: #9a6700; --hl: #fff8c5; --code: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --pass: #3fb950;
    --fail: #f85149; --bar: #4493f8; --ref: #ab7df8; --floor: #d29922; --hl: #3b2e00; --code: #161b22; }
}
html { background: var(--bg); color: var(--fg); }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; margin-top: 2.2rem; }
h3 { margin-top: 1.6rem; } a { color: var(--bar); } .muted, .note { color: var(--muted); }
code, pre, td.file { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; }
pre, blockquote { background: var(--code); border-left: 3px solid var(--line); padding: 0.5rem 0.75rem;
  margin: 0.5rem 0; white-space: pre-wrap; overflow-wrap: anywhere; }
figure { margin: 1rem 0; break-inside: avoid; } figcaption { color: var(--muted); font-size: 0.9em; }
svg.chart { width: 100%; height: auto; max-width: 640px; display: block; font: 11px system-ui, sans-serif; }
svg .bar { fill: var(--bar); } svg .bar.pass { fill: var(--pass); } svg .bar.fail { fill: var(--fail); }
svg a:hover .bar, svg a:focus .bar { opacity: 0.75; }
svg text { fill: var(--fg); } svg .tick, svg .label { fill: var(--muted); }
svg .axis { stroke: var(--fg); } svg .grid { stroke: var(--line); stroke-dasharray: 2 3; }
svg .mark { stroke-width: 2; stroke-dasharray: 5 3; } svg .mark.reference { stroke: var(--ref); }
svg .mark.floor { stroke: var(--floor); } svg .mark-label.reference { fill: var(--ref); } svg .mark-label.floor { fill: var(--floor); }
ul.behind { list-style: none; padding-left: 0; font-size: 0.9em; } ul.behind li { margin: 0.15rem 0; }
ul.behind li:target, tr:target, section:target { background: var(--hl); }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { text-align: left; border-bottom: 1px solid var(--line); padding: 0.25rem 0.4rem; vertical-align: top; }
td.num, th.num { text-align: right; } .pass { color: var(--pass); } .fail { color: var(--fail); }
td.msg { max-width: 28rem; overflow-wrap: anywhere; color: var(--muted); }
.predicted { font-weight: 600; color: var(--floor); }
@media print {
  :root { --bg: #ffffff; --fg: #000000; --muted: #444444; --line: #bbbbbb; --hl: transparent; --code: #f4f4f4; }
  body { max-width: none; margin: 0; } a { color: inherit; text-decoration: none; }
  h2 { break-before: page; } section:first-of-type h2 { break-before: auto; }
  tr, li, blockquote { break-inside: avoid; }
}
"#;

/// The page for `classes` (one per puzzle graded).
pub fn page(classes: &[Class]) -> String {
    let ids: Vec<&str> = classes.iter().map(|c| c.puzzle.as_str()).collect();
    let mut html = format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Class report: {}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>Class report: {}</h1>
<p class="muted">Written by <code>runner grade</code>. Each figure's bars link to the submissions behind them, and each submission to its row in the table at the end of its puzzle.</p>
"#,
        esc(&ids.join(", ")),
        esc(&ids.join(", "))
    );
    for c in classes {
        html += &section(c);
    }
    html + "</body>\n</html>\n"
}

/// The anchor of `file`'s row in `c`'s table.
fn row_id(c: &Class, file: &str) -> String {
    let i = c.rows.iter().position(|r| r.file == file).unwrap_or(0);
    format!("{}-row-{i}", c.puzzle)
}

/// `files` as links to their rows, comma-separated.
fn links(c: &Class, files: &[String]) -> String {
    files
        .iter()
        .map(|f| {
            format!(
                r##"<a href="#{}"><code>{}</code></a>"##,
                row_id(c, f),
                esc(f)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn section(c: &Class) -> String {
    let p = &c.puzzle;
    let mut h = format!(
        r#"<section id="{p}">
<h2>{p}: {}</h2>
<p><strong>{} of {} passed</strong> ({:.0}%).</p>
"#,
        esc(&c.title),
        c.passed,
        c.submissions,
        100.0 * c.pass_rate
    );
    h += &cases(c);
    h += &misconceptions(c);
    h += &lessons_skipped(c);
    h += &speed(c);
    h += &attention(c);
    h += &table(c);
    h + "</section>\n"
}

fn cases(c: &Class) -> String {
    let p = &c.puzzle;
    let bars: Vec<Bar> = c
        .cases_passed
        .iter()
        .map(|b| Bar {
            label: b.cases.to_string(),
            value: b.files.len(),
            href: format!("{p}-cases-{}", b.cases),
            class: if b.cases == c.cases_total && c.cases_total > 0 {
                "pass"
            } else {
                "fail"
            },
        })
        .collect();
    let mut h = format!(
        "<h3>Cases passed</h3>\n<figure>\n{}<figcaption>Submissions by the number of cases they passed, of {} (green: all).</figcaption>\n</figure>\n<ul class=\"behind\">\n",
        chart::columns(
            &format!("{p}-chart-cases"),
            "Submissions by cases passed",
            &bars,
            "cases passed",
            &[]
        ),
        c.cases_total
    );
    for b in c.cases_passed.iter().filter(|b| !b.files.is_empty()) {
        let _ = writeln!(
            h,
            r#"<li id="{p}-cases-{}">{} of {} cases ({}): {}</li>"#,
            b.cases,
            b.cases,
            c.cases_total,
            b.files.len(),
            links(c, &b.files)
        );
    }
    h + "</ul>\n"
}

fn misconceptions(c: &Class) -> String {
    let p = &c.puzzle;
    let mut h = String::from("<h3>Misconceptions</h3>\n");
    if c.misconceptions.is_empty() {
        return h + "<p>No diagnostic: every submission passed.</p>\n";
    }
    let bars: Vec<Bar> = c
        .misconceptions
        .iter()
        .map(|m| Bar {
            label: m.kind.clone(),
            value: m.files.len(),
            href: format!("{p}-kind-{}", m.kind),
            class: "fail",
        })
        .collect();
    let _ = write!(
        h,
        "<figure>\n{}<figcaption>Diagnostic kinds by the number of submissions they were found in (a submission counts once per kind). What each kind means: the book's introduction, \"The diagnostic kinds\".</figcaption>\n</figure>\n",
        chart::bars(
            &format!("{p}-chart-kinds"),
            "Diagnostic kinds by submissions",
            &bars
        )
    );
    for (i, m) in c.misconceptions.iter().enumerate() {
        let _ = write!(
            h,
            r##"<div id="{p}-kind-{}"><h4><code>{}</code>: {} submission{}</h4>
<p>For example, <a href="#{}"><code>{}</code></a>{} was told:</p>
<blockquote>{}</blockquote>
"##,
            m.kind,
            m.kind,
            m.files.len(),
            if m.files.len() == 1 { "" } else { "s" },
            row_id(c, &m.example.file),
            esc(&m.example.file),
            m.example
                .line
                .map(|l| format!(" (line {l})"))
                .unwrap_or_default(),
            esc(&m.example.message)
        );
        if !m.steps.is_empty() {
            // The commonest kind gets a chart of its steps; every kind gets the list.
            if i == 0 {
                let bars: Vec<Bar> = m
                    .steps
                    .iter()
                    .map(|s| Bar {
                        label: s.name.clone(),
                        value: s.lines.len(),
                        href: format!("{p}-kind-{}-step-{}", m.kind, step_key(s.step)),
                        class: "fail",
                    })
                    .collect();
                let _ = write!(
                    h,
                    "<figure>\n{}<figcaption>Where in the lesson the commonest kind's lines fall: each submission's line, placed on the step its code does.</figcaption>\n</figure>\n",
                    chart::bars(
                        &format!("{p}-chart-steps"),
                        &format!("Steps of the lesson where {} was found", m.kind),
                        &bars
                    )
                );
            }
            h += "<ul class=\"behind\">\n";
            for s in &m.steps {
                let skeleton = s
                    .skeleton
                    .as_ref()
                    .map(|w| format!(" (the skeleton's \"{}\")", esc(w)))
                    .unwrap_or_default();
                let lines: Vec<String> = s
                    .lines
                    .iter()
                    .map(|l| {
                        format!(
                            r##"<a href="#{}"><code>{}</code></a>:{} <code>{}</code>"##,
                            row_id(c, &l.file),
                            esc(&l.file),
                            l.line,
                            esc(&l.code)
                        )
                    })
                    .collect();
                let _ = writeln!(
                    h,
                    r#"<li id="{p}-kind-{}-step-{}"><strong>{}</strong>{skeleton}: {}<br>{}</li>"#,
                    m.kind,
                    step_key(s.step),
                    esc(&s.name),
                    s.lines.len(),
                    lines.join("<br>")
                );
            }
            h += "</ul>\n";
        }
        let _ = writeln!(
            h,
            "<p class=\"note\">Submissions: {}</p></div>",
            links(c, &m.files)
        );
    }
    h
}

fn step_key(step: super::steps::Step) -> String {
    serde_json::to_value(step)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn lessons_skipped(c: &Class) -> String {
    let p = &c.puzzle;
    let mut h = String::from("<h3>Lessons skipped</h3>\n");
    if c.lessons_skipped.is_empty() {
        return h + "<p>No budget refusal.</p>\n";
    }
    let _ = write!(
        h,
        "<p>Submissions that compute the right numbers without the puzzle's lesson, refused by its budget.</p>\n<table id=\"{p}-budgets\"><tr><th>file</th><th>case</th><th>what the budget counts</th><th class=\"num\">counted</th><th class=\"num\">allowed</th></tr>\n"
    );
    let num = |x: Option<f64>| {
        x.map_or_else(
            || "-".into(),
            |x| {
                if x.fract() == 0.0 {
                    format!("{x:.0}")
                } else {
                    format!("{x:.2}")
                }
            },
        )
    };
    for o in &c.lessons_skipped {
        let _ = writeln!(
            h,
            r##"<tr><td class="file"><a href="#{}">{}</a></td><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td></tr>"##,
            row_id(c, &o.file),
            esc(&o.file),
            esc(o.case.as_deref().unwrap_or("")),
            esc(&o.what),
            num(o.counted),
            num(o.allowed)
        );
    }
    h + "</table>\n"
}

/// Seconds as µs or ms.
fn time(s: f64) -> String {
    if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn speed(c: &Class) -> String {
    let p = &c.puzzle;
    let mut h = String::from("<h3>Speed</h3>\n");
    let Some(s) = &c.speed else {
        return h + "<p>No time: no submission passed.</p>\n";
    };
    let predicted = s.source == "predicted";
    let bars: Vec<Bar> = s
        .bins
        .iter()
        .enumerate()
        .map(|(i, b)| Bar {
            label: time(b.from_seconds),
            value: b.files.len(),
            href: format!("{p}-time-{i}"),
            class: "pass",
        })
        .collect();
    let marks = marks(s);
    let title = if predicted {
        "Predicted times of the passing submissions"
    } else {
        "Measured times of the passing submissions"
    };
    let _ = write!(
        h,
        "<p>{}</p>\n<figure>\n{}<figcaption>{} on {}, full-scale case, a log scale (each bin from the time under it).{}</figcaption>\n</figure>\n<ul class=\"behind\">\n",
        if predicted {
            "<span class=\"predicted\">Predicted, not measured:</span> no GPU graded this class, so each passing submission's time is <code>runner profile</code>'s prediction."
        } else {
            "Measured on the GPU as <code>runner bench</code> measures (the median of 20 runs)."
        },
        chart::columns(
            &format!("{p}-chart-speed"),
            title,
            &bars,
            if predicted {
                "predicted time (log scale)"
            } else {
                "measured time (log scale)"
            },
            &marks
        ),
        title,
        esc(&s.on),
        s.floor
            .as_ref()
            .map(|f| format!(" The floor is {}.", esc(&f.what)))
            .unwrap_or_default()
    );
    for (i, b) in s.bins.iter().enumerate().filter(|b| !b.1.files.is_empty()) {
        let _ = writeln!(
            h,
            r#"<li id="{p}-time-{i}">{} to {}: {}</li>"#,
            time(b.from_seconds),
            time(b.to_seconds),
            links(c, &b.files)
        );
    }
    h + "</ul>\n"
}

/// The reference solution's and the floor's lines, in bins from the chart's left edge.
fn marks(s: &Speed) -> Vec<Mark> {
    let (Some(first), Some(last)) = (s.bins.first(), s.bins.last()) else {
        return vec![];
    };
    let (lo, hi) = (first.from_seconds.log10(), last.to_seconds.log10());
    let at = |t: f64| (t.log10() - lo) / (hi - lo) * s.bins.len() as f64;
    let mut marks = vec![];
    if let Some(r) = s.reference_seconds {
        marks.push(Mark {
            at: at(r),
            label: format!("reference solution {}", time(r)),
            class: "reference",
        });
    }
    if let Some(f) = &s.floor {
        marks.push(Mark {
            at: at(f.seconds),
            label: format!("hardware floor {}", time(f.seconds)),
            class: "floor",
        });
    }
    marks
}

fn attention(c: &Class) -> String {
    let a = &c.attention;
    let mut h = format!(
        "<h3 id=\"{}-attention\">For the instructor's attention</h3>\n",
        c.puzzle
    );
    if a.refused.is_empty() && a.timeouts.is_empty() && a.identical.is_empty() {
        return h + "<p>Nothing: no refusal, no timeout, no identical files.</p>\n";
    }
    let note = |f: &str| {
        if c.rows.iter().any(|r| r.file == f) {
            links(c, &[f.to_string()])
        } else {
            format!("<code>{}</code>", esc(f))
        }
    };
    for (title, notes) in [("Refused", &a.refused), ("Timeouts", &a.timeouts)] {
        if notes.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<h4>{title}</h4>\n<ul class=\"behind\">");
        for n in notes.iter() {
            let _ = writeln!(h, "<li>{}: {}</li>", note(&n.file), esc(&n.reason));
        }
        h += "</ul>\n";
    }
    if !a.identical.is_empty() {
        h += "<h4>Identical files</h4>\n<ul class=\"behind\">\n";
        for g in &a.identical {
            let _ = writeln!(
                h,
                "<li>{}{}: {}</li>",
                esc(&g.how),
                if g.skeleton {
                    " (the skeleton, unchanged)"
                } else {
                    ""
                },
                links(c, &g.files)
            );
        }
        h += "</ul>\n";
    }
    h
}

fn table(c: &Class) -> String {
    let p = &c.puzzle;
    let mut h = format!(
        "<h3 id=\"{p}-rows\">Submissions</h3>\n<table>\n<tr><th>file</th><th>passed</th><th class=\"num\">cases</th><th>diagnostics</th><th class=\"num\">time{}</th><th>first message</th></tr>\n",
        if c.speed.as_ref().is_some_and(|s| s.source == "predicted") {
            " (predicted)"
        } else {
            ""
        }
    );
    for (i, r) in c.rows.iter().enumerate() {
        let message: String = r
            .message
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(240)
            .collect();
        let _ = writeln!(
            h,
            r#"<tr id="{p}-row-{i}"><td class="file">{}</td><td class="{}">{}</td><td class="num">{}/{}</td><td>{}</td><td class="num">{}</td><td class="msg">{}</td></tr>"#,
            esc(&r.file),
            if r.passed { "pass" } else { "fail" },
            if r.passed { "✓" } else { "✗" },
            r.cases_passed,
            r.cases_total,
            esc(&r.kinds.join(" ")),
            r.seconds.map(time).unwrap_or_else(|| "-".into()),
            esc(&message)
        );
    }
    h + "</table>\n"
}
