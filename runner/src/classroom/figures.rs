//! The book's measured figures: every time, peak and floor a chapter states about a GPU is a row of
//! one table, `book/src/figures.tsv` (name, value, unit, GPU, the command that measured it, and
//! where its output is recorded), and chapters name the row instead of retyping the number:
//! `{{#figure h100.fp32_peak}}` becomes `65.9 TFLOP/s`, `{{#value h100.fp32_peak}}` the bare
//! `65.9` (for lists such as "74.0, 76.1 and 241.9 µs"), and `{{#figures}}` the whole table as a
//! markdown table (the book's page of measurements). [`apply`] rewrites the chapters before mdBook
//! renders them; a name the table does not hold stops the build. [`literals`] finds the figures a
//! chapter still states as typed numbers (a number followed by µs, us, ms, GB/s or TFLOP/s in its
//! prose), which the book's tests refuse.

use anyhow::anyhow;
use mdbook_driver::MDBook;
use mdbook_driver::book::BookItem;
use std::path::Path;

/// The table's file, relative to the book's `src/` folder.
pub const TABLE: &str = "figures.tsv";

/// The units a row may have.
const UNITS: [&str; 5] = ["µs", "ms", "TFLOP/s", "GB/s", "%"];

/// The units that make a typed number in a chapter a GPU figure.
#[cfg(test)]
const FIGURE_UNITS: [&str; 5] = ["µs", "us", "ms", "TFLOP/s", "GB/s"];

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    /// `h100.fp32_peak`: letters, digits, `.`, `_` and `-`.
    pub name: String,
    /// As the book prints it: `65.9`, `1,035`.
    pub value: String,
    pub unit: String,
    /// The GPU as the driver names it (`NVIDIA H100 80GB HBM3`), or where no GPU ran, what
    /// produced the figure instead (`runner profile's model of an H100 SXM5`).
    pub gpu: String,
    /// The command that measured it.
    pub command: String,
    /// Where its output is kept: a file of the repository, or a commit.
    pub source: String,
}

impl Figure {
    /// The value with its unit, as a chapter prints it: joined by a no-break space, so that a
    /// line never ends between them.
    pub fn text(&self) -> String {
        if self.unit == "%" {
            format!("{}%", self.value)
        } else {
            format!("{}\u{a0}{}", self.value, self.unit)
        }
    }
}

/// The rows of the table's text; blank lines and lines starting with `#` are skipped. Every
/// problem is reported with its line.
pub fn parse(text: &str) -> Result<Vec<Figure>, String> {
    let mut rows: Vec<Figure> = vec![];
    let mut problems = vec![];
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
        let [name, value, unit, gpu, command, source] = cells[..] else {
            problems.push(format!(
                "line {}: {} cells, want 6 (name, value, unit, GPU, command, source)",
                n + 1,
                cells.len()
            ));
            continue;
        };
        let why = if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            Some(format!("`{name}` is not a name"))
        } else if value.replace(',', "").parse::<f64>().is_err() {
            Some(format!("`{value}` is not a number"))
        } else if !UNITS.contains(&unit) {
            Some(format!("unit `{unit}` is none of {}", UNITS.join(", ")))
        } else if gpu.is_empty() || command.is_empty() || source.is_empty() {
            Some("the GPU, the command and the source must all be given".to_string())
        } else if rows.iter().any(|r| r.name == name) {
            Some(format!("`{name}` has a row above"))
        } else {
            None
        };
        match why {
            Some(why) => problems.push(format!("line {}: {why}", n + 1)),
            None => rows.push(Figure {
                name: name.into(),
                value: value.into(),
                unit: unit.into(),
                gpu: gpu.into(),
                command: command.into(),
                source: source.into(),
            }),
        }
    }
    if problems.is_empty() {
        Ok(rows)
    } else {
        Err(problems.join("\n"))
    }
}

/// The table of the book whose sources are in `src`; none where it has no table (a book that
/// names no figure needs none).
pub fn load(src: &Path) -> anyhow::Result<Vec<Figure>> {
    let path = src.join(TABLE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => anyhow::bail!("cannot read the book's figures {}: {e}", path.display()),
    };
    parse(&text).map_err(|e| anyhow!("{}:\n{e}", path.display()))
}

/// `text` with its `{{#figure NAME}}`, `{{#value NAME}}` and `{{#figures}}` replaced; the names
/// the table does not hold, when there are any.
pub fn expand(text: &str, figures: &[Figure]) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut unknown = vec![];
    let mut rest = text;
    while let Some(at) = rest.find("{{#") {
        let inner_from = at + 3;
        let Some(close) = rest[inner_from..].find("}}").map(|i| inner_from + i) else {
            break;
        };
        let inner = rest[inner_from..close].trim();
        let (kind, arg) = inner.split_once(' ').unwrap_or((inner, ""));
        let arg = arg.trim();
        let find = |name: &str| figures.iter().find(|f| f.name == name);
        let replacement = match kind {
            "figures" if arg.is_empty() => Some(table(figures)),
            "figure" | "value" => match find(arg) {
                Some(f) if kind == "figure" => Some(f.text()),
                Some(f) => Some(f.value.clone()),
                None => {
                    unknown.push(format!("`{{{{#{kind} {arg}}}}}`"));
                    Some(String::new())
                }
            },
            _ => None,
        };
        match replacement {
            Some(r) => {
                out += &rest[..at];
                out += &r;
            }
            // Another link (`{{#include ...}}`): left for mdBook.
            None => out += &rest[..close + 2],
        }
        rest = &rest[close + 2..];
    }
    out += rest;
    if unknown.is_empty() {
        Ok(out)
    } else {
        Err(unknown)
    }
}

/// The whole table in markdown, for the page of measurements.
fn table(figures: &[Figure]) -> String {
    let mut out =
        String::from("| figure | value | GPU | command | recorded in |\n|---|---|---|---|---|\n");
    for f in figures {
        out += &format!(
            "| `{}` | {} | {} | `{}` | {} |\n",
            f.name,
            f.text(),
            f.gpu,
            f.command.replace('|', "\\|"),
            f.source
        );
    }
    out
}

/// Replaces the figure links of every chapter of `book` from the table in its `src/`.
pub fn apply(book: &mut MDBook) -> anyhow::Result<()> {
    let src = book.root.join(&book.config.book.src);
    let figures = load(&src)?;
    let mut problems = vec![];
    book.book.for_each_mut(|item| {
        if let BookItem::Chapter(chapter) = item {
            match expand(&chapter.content, &figures) {
                Ok(text) => chapter.content = text,
                Err(unknown) => problems.push(format!(
                    "{}: {} not in {TABLE}",
                    chapter.name,
                    unknown.join(", ")
                )),
            }
        }
    });
    if problems.is_empty() {
        Ok(())
    } else {
        Err(anyhow!(
            "the book names figures its table does not hold:\n{}",
            problems.join("\n")
        ))
    }
}

/// The GPU figures `markdown` types as numbers instead of naming a row: `(line, "65.9 TFLOP/s")`
/// for every number followed by a figure unit in its prose (fenced blocks, which hold the
/// runner's own tested output, are not prose). The book's test holds every chapter to none.
#[cfg(test)]
pub fn literals(markdown: &str) -> Vec<(usize, String)> {
    let mut found = vec![];
    let mut fenced = false;
    for (n, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let starts = chars[i].is_ascii_digit()
                && (i == 0
                    || !(chars[i - 1].is_alphanumeric()
                        || matches!(chars[i - 1], '.' | ',' | '^' | '-' | '_')));
            if !starts {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit()
                    || (matches!(chars[j], '.' | ',')
                        && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
            {
                j += 1;
            }
            let mut k = j;
            while k < chars.len() && matches!(chars[k], ' ' | '\u{a0}') {
                k += 1;
            }
            let after: String = chars[k..].iter().collect();
            let unit = FIGURE_UNITS.iter().find(|u| {
                after.starts_with(*u)
                    && !after[u.len()..]
                        .chars()
                        .next()
                        .is_some_and(char::is_alphanumeric)
            });
            if let Some(unit) = unit {
                let number: String = chars[i..j].iter().collect();
                found.push((n + 1, format!("{number} {unit}")));
            }
            i = j.max(i + 1);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: &str = "# name\tvalue\tunit\tgpu\tcommand\tsource\n\
        h100.fp32_peak\t65.9\tTFLOP/s\tNVIDIA H100 80GB HBM3\trunner bench puzzle-08 --solution\tbench/RESULTS.md\n\
        p09.cudnn\t2,006\tµs\tNVIDIA H100 80GB HBM3\tbench/conv2d_anchors.py\tlab/2d/results/round6-anchors.json\n\
        p08.share\t82.4\t%\tNVIDIA H100 80GB HBM3\trunner bench puzzle-08 --solution\tbench/RESULTS.md\n";

    #[test]
    fn rows_parse_and_expand() {
        let figures = parse(ROWS).unwrap();
        assert_eq!(figures.len(), 3);
        let text = "peak {{#figure h100.fp32_peak}}, cuDNN {{#figure p09.cudnn}} ({{#value p09.cudnn}}), \
                    {{#figure p08.share}}\n{{#include a.cu:solve}}";
        assert_eq!(
            expand(text, &figures).unwrap(),
            "peak 65.9\u{a0}TFLOP/s, cuDNN 2,006\u{a0}µs (2,006), 82.4%\n{{#include a.cu:solve}}"
        );
        let page = expand("{{#figures}}", &figures).unwrap();
        assert!(page.contains("| `p09.cudnn` | 2,006\u{a0}µs | NVIDIA H100 80GB HBM3 | `bench/conv2d_anchors.py` | lab/2d/results/round6-anchors.json |"), "{page}");
    }

    #[test]
    fn a_name_the_table_does_not_hold_is_an_error() {
        let figures = parse(ROWS).unwrap();
        assert_eq!(
            expand("{{#figure h100.fp32_peek}} {{#value nope}}", &figures),
            Err(vec![
                "`{{#figure h100.fp32_peek}}`".to_string(),
                "`{{#value nope}}`".to_string()
            ])
        );
    }

    #[test]
    fn bad_rows_are_reported_with_their_line() {
        let bad = "a\t1\tµs\tGPU\tcmd\n\
                   b\tfast\tµs\tGPU\tcmd\tsrc\n\
                   c\t1\tparsecs\tGPU\tcmd\tsrc\n\
                   d\t1\tµs\t\tcmd\tsrc\n\
                   e\t1\tµs\tGPU\tcmd\tsrc\n\
                   e\t2\tµs\tGPU\tcmd\tsrc\n";
        let problems = parse(bad).unwrap_err();
        let lines: Vec<&str> = problems.lines().collect();
        assert_eq!(lines.len(), 5, "{problems}");
        assert!(lines[0].starts_with("line 1: 5 cells"), "{problems}");
        assert!(lines[1].contains("`fast` is not a number"), "{problems}");
        assert!(lines[2].contains("unit `parsecs`"), "{problems}");
        assert!(lines[3].starts_with("line 4: the GPU"), "{problems}");
        assert!(lines[4].contains("`e` has a row above"), "{problems}");
    }

    #[test]
    fn typed_figures_are_found_in_prose_only() {
        let md = "At 93 µs and 65.9 TFLOP/s, 2,823 GB/s and 113.0 us; 1,035\u{a0}µs.\n\
                  Not 60% nor 2^-11 nor sm_90 nor 16 bytes nor 12 usages nor x2 us.\n\
                  ```console\npredicted 777.9 us\n```\n\
                  {{#figure h100.fp32_peak}} and 3 ms.\n";
        let found: Vec<String> = literals(md)
            .into_iter()
            .map(|(l, f)| format!("{l}: {f}"))
            .collect();
        assert_eq!(
            found,
            [
                "1: 93 µs",
                "1: 65.9 TFLOP/s",
                "1: 2,823 GB/s",
                "1: 113.0 us",
                "1: 1,035 µs",
                "6: 3 ms"
            ]
        );
    }

    #[test]
    fn a_book_without_a_table_has_no_figures_and_a_bad_table_stops_it() {
        let dir = std::env::temp_dir().join(format!("figures-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(load(&dir).unwrap(), vec![]);
        std::fs::write(dir.join(TABLE), "x\t1\n").unwrap();
        let err = load(&dir).unwrap_err().to_string();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(err.contains("line 1: 2 cells"), "{err}");
    }

    /// The book's own table parses, and its chapters state no GPU figure outside it: each is a
    /// `{{#figure}}` of a row the table holds.
    #[test]
    fn the_books_chapters_take_every_figure_from_the_table() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/src");
        let figures = load(&src).unwrap();
        let mut problems = vec![];
        let mut used = 0;
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            used += text.matches("{{#figure ").count();
            for (line, figure) in literals(&text) {
                problems.push(format!("{name}:{line}: `{figure}` typed, not from {TABLE}"));
            }
            if let Err(unknown) = expand(&text, &figures) {
                problems.push(format!("{name}: {} not in {TABLE}", unknown.join(", ")));
            }
        }
        assert!(used > 50, "{used} figures named");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
