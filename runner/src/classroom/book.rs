//! The book: building it through mdBook's library, its chapters' addresses, and checking its
//! `{{#include}}` links, which mdBook itself only logs when they break.
//!
//! The book is built into `book/build` (ignored by git; `CONV_WORKBOOK_BOOK_BUILD` names another
//! folder, as the book's tests do) with `create-missing` forced off, so that a chapter listed in
//! SUMMARY.md without its file is an error rather than a new empty file in the sources. Its GPU
//! figures come from its table of measurements first ([`crate::classroom::figures`]). The include checker reads the raw markdown the way mdBook's link preprocessor does:
//! `{{#include path}}`, `{{#include path:anchor}}`, `{{#include path:N:M}}` (and `N`, `N:`, `:M`),
//! the same for `{{#rustdoc_include}}`, and `{{#playground path}}`; paths are relative to the
//! chapter's folder and `\{{#...}}` is an escaped, literal link.

use anyhow::Context;
use mdbook_driver::MDBook;
use mdbook_driver::config::Config;
use std::path::{Path, PathBuf};

/// Builds the book under `root/book` into `root/book/build` (or `CONV_WORKBOOK_BOOK_BUILD`);
/// returns the build folder.
pub fn build(root: &Path) -> anyhow::Result<PathBuf> {
    let book_dir = root.join("book");
    let toml = book_dir.join("book.toml");
    let mut config = Config::from_disk(&toml)
        .with_context(|| format!("cannot read the book's configuration {}", toml.display()))?;
    config.update_from_env()?;
    let out = std::env::var_os("CONV_WORKBOOK_BOOK_BUILD")
        .map(PathBuf::from)
        .unwrap_or_else(|| book_dir.join("build"));
    config.build.build_dir = out.clone();
    config.build.create_missing = false;
    let mut book = MDBook::load_with_config(&book_dir, config)
        .with_context(|| format!("cannot load the book in {}", book_dir.display()))?;
    crate::classroom::figures::apply(&mut book)?;
    book.build()
        .with_context(|| format!("mdBook could not build {}", book_dir.display()))?;
    Ok(out)
}

/// The `file://` address of a built page (`puzzle-03.html`, `index.html`).
pub fn page_url(build_dir: &Path, page: &str) -> String {
    let path = build_dir.join(page);
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    format!("file://{}", path.display())
}

/// One `{{#...}}` link that does not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenInclude {
    /// The chapter, as given to [`check_includes`].
    pub chapter: String,
    /// 1-based line of the link in the chapter.
    pub line: usize,
    /// The link as written, e.g. `{{#include ../../solutions/puzzle-01.cu:solve}}`.
    pub link: String,
    pub problem: String,
}

/// What part of a file a link takes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Whole,
    Anchor(String),
    /// 1-based first line, and last line (inclusive) when bounded.
    Lines(usize, Option<usize>),
}

/// Every broken link of one chapter. `text` is the chapter's markdown, `dir` its folder (links are
/// relative to it), `chapter` the name used in the report.
pub fn check_includes(chapter: &str, text: &str, dir: &Path) -> Vec<BrokenInclude> {
    let mut broken = vec![];
    for (line, link, kind, target) in links(text) {
        let Some((path, part)) = parse_target(&kind, &target) else {
            continue;
        };
        let problem = match std::fs::read_to_string(dir.join(&path)) {
            Err(e) => Some(format!("cannot read {path}: {e}")),
            Ok(content) => part_problem(&content, &part, &path),
        };
        if let Some(problem) = problem {
            broken.push(BrokenInclude {
                chapter: chapter.to_string(),
                line,
                link,
                problem,
            });
        }
    }
    broken
}

/// The links of `text`: (line, the whole link, its type, its target), escaped links left out.
fn links(text: &str) -> Vec<(usize, String, String, String)> {
    let mut found = vec![];
    let mut from = 0;
    while let Some(at) = text[from..].find("{{#").map(|i| from + i) {
        from = at + 3;
        if text[..at].ends_with('\\') {
            continue;
        }
        let Some(close) = text[at..].find("}}").map(|i| at + i) else {
            break;
        };
        let inner = &text[at + 3..close];
        let kind: String = inner
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let target = inner[kind.len()..].trim();
        if inner[kind.len()..].starts_with(char::is_whitespace) && !target.contains('}') {
            let line = text[..at].matches('\n').count() + 1;
            found.push((
                line,
                text[at..close + 2].to_string(),
                kind,
                target.to_string(),
            ));
            from = close + 2;
        }
    }
    found
}

/// The file and part a link of type `kind` names; `None` for links that name no file (`title`).
fn parse_target(kind: &str, target: &str) -> Option<(String, Part)> {
    let first = target.split_whitespace().next()?;
    match kind {
        "playground" => Some((first.to_string(), Part::Whole)),
        "include" | "rustdoc_include" => {
            let (path, rest) = first.split_once(':').unwrap_or((first, ""));
            Some((path.to_string(), parse_part(rest)))
        }
        _ => None,
    }
}

/// mdBook's reading of what follows the path: a line range (`N`, `N:`, `N:M`, `:M`) or an anchor.
fn parse_part(rest: &str) -> Part {
    if rest.is_empty() {
        return Part::Whole;
    }
    let mut parts = rest.splitn(2, ':');
    let first = parts.next().unwrap_or("");
    let start = match first.parse::<usize>() {
        Ok(n) => n.max(1),
        Err(_) if first.is_empty() => 1,
        Err(_) => return Part::Anchor(first.to_string()),
    };
    match parts.next() {
        None if !first.is_empty() => Part::Lines(start, Some(start)),
        None => Part::Whole,
        Some(end) => Part::Lines(start, end.parse().ok()),
    }
}

/// Why `part` of `content` cannot be included, if it cannot.
fn part_problem(content: &str, part: &Part, path: &str) -> Option<String> {
    let lines = content.lines().count();
    match part {
        Part::Whole => None,
        Part::Lines(start, end) => {
            let last = end.unwrap_or(*start);
            (*start > lines || last > lines || last < *start).then(|| {
                format!("lines {start}..{last} are not all in {path}, which has {lines} lines")
            })
        }
        Part::Anchor(name) => {
            let has = |marker: &str| content.lines().any(|l| anchor_on(l, marker) == Some(name));
            match (has("ANCHOR:"), has("ANCHOR_END:")) {
                (true, true) => None,
                (false, _) => Some(format!("{path} has no `ANCHOR: {name}`")),
                (true, false) => Some(format!(
                    "{path} has `ANCHOR: {name}` but no `ANCHOR_END: {name}`"
                )),
            }
        }
    }
}

/// The anchor name after `marker` (`ANCHOR:` or `ANCHOR_END:`) on `line`, as mdBook matches it.
pub fn anchor_on<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let mut rest = line;
    while let Some(at) = rest.find(marker) {
        // `ANCHOR:` must not match inside `ANCHOR_END:`, which the search for `ANCHOR:` skips anyway.
        let after = rest[at + marker.len()..].trim_start();
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(after.len());
        if name_len > 0 {
            return Some(&after[..name_len]);
        }
        rest = &rest[at + marker.len()..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder with `code.cu` holding a `solve` anchor (lines 2..4) in 5 lines.
    fn fixture() -> tempdir::Dir {
        let dir = tempdir::Dir::new("includes");
        std::fs::write(
            dir.path().join("code.cu"),
            "head\n// ANCHOR: solve\nbody\n// ANCHOR_END: solve\ntail\n",
        )
        .unwrap();
        dir
    }

    fn problems(text: &str) -> Vec<String> {
        let dir = fixture();
        check_includes("ch.md", text, dir.path())
            .into_iter()
            .map(|b| format!("{}: {} ({})", b.line, b.link, b.problem))
            .collect()
    }

    #[test]
    fn resolving_links_pass() {
        let text = "# T\n{{#include code.cu}}\n{{#include code.cu:solve}}\n\
                    {{#include code.cu:2:4}}\n{{#include code.cu:5}}\n{{#include code.cu:3:}}\n\
                    {{#include code.cu::5}}\n{{#rustdoc_include code.cu:solve}}\n{{#title Ok}}\n";
        assert_eq!(problems(text), Vec::<String>::new());
    }

    #[test]
    fn missing_file_is_reported_at_its_line() {
        assert_eq!(
            problems("# T\n\n```cuda\n{{#include ../nope.cu:solve}}\n```\n")
                .iter()
                .map(|p| p.split(" (").next().unwrap())
                .collect::<Vec<_>>(),
            ["4: {{#include ../nope.cu:solve}}"]
        );
    }

    #[test]
    fn missing_anchor_and_unclosed_anchor_are_reported() {
        let p = problems("{{#include code.cu:solv}}\n{{#rustdoc_include code.cu:signature}}\n");
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("has no `ANCHOR: solv`"), "{p:?}");
        let dir = fixture();
        std::fs::write(dir.path().join("open.cu"), "// ANCHOR: solve\nx\n").unwrap();
        let open = check_includes("ch.md", "{{#include open.cu:solve}}", dir.path());
        assert!(
            open[0].problem.contains("no `ANCHOR_END: solve`"),
            "{open:?}"
        );
    }

    #[test]
    fn line_ranges_past_the_end_are_reported() {
        let p = problems("{{#include code.cu:6}}\n{{#include code.cu:2:9}}\n");
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[1].contains("which has 5 lines"), "{p:?}");
    }

    #[test]
    fn escaped_links_are_literal() {
        assert_eq!(problems("\\{{#include nope.cu}}\n"), Vec::<String>::new());
        assert_eq!(problems("{{#include nope.cu}}\n").len(), 1);
    }

    #[test]
    fn anchor_names_match_whole_words() {
        assert_eq!(anchor_on("// ANCHOR: solve", "ANCHOR:"), Some("solve"));
        assert_eq!(
            anchor_on("  // ANCHOR_END:solve-2 x", "ANCHOR_END:"),
            Some("solve-2")
        );
        assert_eq!(anchor_on("// ANCHOR_END: solve", "ANCHOR:"), None);
        assert_eq!(anchor_on("no marker", "ANCHOR:"), None);
    }

    /// A temporary folder removed on drop (no dependency for so little).
    mod tempdir {
        use std::path::{Path, PathBuf};

        pub struct Dir(PathBuf);

        impl Dir {
            pub fn new(tag: &str) -> Dir {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let n = N.fetch_add(1, Ordering::Relaxed);
                let dir =
                    std::env::temp_dir().join(format!("runner-{tag}-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                Dir(dir)
            }

            pub fn path(&self) -> &Path {
                &self.0
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }
}
