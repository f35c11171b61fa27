//! The book as a learner reads it. Its code (inline code spans, and `cuda` blocks) is ASCII, so
//! what is pasted compiles (a U+2212 minus sign does not). Built by `runner book` into a scratch
//! folder (`CONV_WORKBOOK_BOOK_BUILD`): every `![alt](img/..)` of a chapter becomes an `<img>` (an
//! unbalanced `[` in the alt text leaves raw markdown instead), code blocks are highlighted as C++
//! (highlight.js knows no `cuda`), no `{{#...}}` link is left unexpanded, no folded title shows raw
//! backticks, no wrapped line of a paragraph starts a list, and the search index is built. In
//! headless Chromium, where one is installed, no code block or table of any page is wider than its
//! box at 1280 px, and on the navy theme the figures are framed, not bright cards. Every SVG draws
//! an opaque background covering its viewBox (in the dark themes a transparent one loses its black
//! labels) and keeps each label inside the viewBox and clear of every other label, its width
//! estimated from the font size.

use std::path::{Path, PathBuf};
use std::process::Command;

fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("book")
}

fn chapters() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(book().join("src"))
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_str()?.to_string();
            name.ends_with(".md")
                .then(|| (name, std::fs::read_to_string(&p).unwrap()))
        })
        .collect();
    out.sort();
    out
}

/// The markdown outside fenced blocks, and the fenced blocks with their language.
fn split(md: &str) -> (String, Vec<(String, String)>) {
    let mut prose = String::new();
    let mut blocks: Vec<(String, String)> = vec![];
    let mut open: Option<(String, String)> = None;
    for line in md.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(lang)) => open = Some((lang.trim().to_string(), String::new())),
            (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
            (Some((_, body)), None) => *body += &format!("{line}\n"),
            (None, None) => prose += &format!("{line}\n"),
        }
    }
    (prose, blocks)
}

#[test]
fn code_a_learner_may_paste_is_ascii() {
    let mut bad = vec![];
    for (name, md) in chapters() {
        let (prose, blocks) = split(&md);
        // Inline code spans (they may wrap across lines).
        for (i, span) in prose.split('`').enumerate() {
            if i % 2 == 1 && !span.is_ascii() {
                bad.push(format!("{name}: `{span}`"));
            }
        }
        for (lang, body) in blocks {
            if matches!(lang.as_str(), "cuda" | "cpp" | "c" | "c++") && !body.is_ascii() {
                bad.push(format!(
                    "{name}: a {lang} block holds {:?}",
                    body.chars().find(|c| !c.is_ascii())
                ));
            }
        }
    }
    assert!(bad.is_empty(), "code outside ASCII:\n{}", bad.join("\n"));
}

/// The book built by `runner book` into a scratch folder named after `tag`, removed on drop.
struct Built(PathBuf);

impl Built {
    fn new(tag: &str) -> Built {
        Built::themed(tag, "light")
    }

    /// Built with `theme` as the default one (mdBook's `output.html.default-theme`).
    fn themed(tag: &str, theme: &str) -> Built {
        let out = std::env::temp_dir().join(format!("book-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let run = Command::new(env!("CARGO_BIN_EXE_runner"))
            .arg("--root")
            .arg(book().parent().unwrap())
            .arg("book")
            .env("CONV_WORKBOOK_BOOK_BUILD", &out)
            .env("MDBOOK_OUTPUT__HTML__DEFAULT_THEME", theme)
            .env("NO_COLOR", "1")
            .output()
            .expect("runner runs");
        assert!(
            run.status.success(),
            "runner book failed:\n{}",
            String::from_utf8_lossy(&run.stderr)
        );
        Built(out)
    }
}

impl Drop for Built {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_built_book_has_every_image_highlighting_and_search() {
    let built = Built::new("html");
    let out = &built.0;
    let mut problems = vec![];
    for (name, md) in chapters().into_iter().filter(|(n, _)| n != "SUMMARY.md") {
        let page = name.replace(".md", ".html");
        let html = std::fs::read_to_string(out.join(&page)).unwrap_or_default();
        let (prose, blocks) = split(&md);
        let wanted = prose.matches("](img/").count();
        let got = html.matches("<img src=\"img/").count();
        if got < wanted || html.contains("](img/") {
            problems.push(format!(
                "{page}: {wanted} images in the markdown, {got} <img> in the page"
            ));
        }
        if blocks.iter().any(|(lang, _)| lang == "cuda") {
            problems.push(format!(
                "{name}: a ```cuda block (highlight.js has no cuda: use cpp)"
            ));
        }
        if let Some(at) = html.find("{{#") {
            let link: String = html[at..].chars().take(40).collect();
            problems.push(format!("{page}: an unexpanded link, {link}"));
        }
        for summary in html.split("<summary>").skip(1) {
            let title = summary.split("</summary>").next().unwrap_or("");
            if title.contains('`') {
                problems.push(format!(
                    "{page}: a folded title shows raw backticks (use <code>): {title}"
                ));
            }
        }
    }
    let search_index = std::fs::read_dir(out).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("searchindex")
    });
    if !search_index {
        problems.push("no search index".into());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The value of attribute `name` in the tag text `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next()
}

#[test]
fn every_svg_has_a_background_and_its_labels_inside_the_view_box_apart() {
    let mut problems = vec![];
    let dir = book().join("src/img");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let svg = std::fs::read_to_string(&path).unwrap();
        let root = &svg[svg.find("<svg").unwrap()..];
        let root = &root[..root.find('>').unwrap()];
        let view: Vec<f64> = attr(root, "viewBox")
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        let [_, _, w, h] = view[..] else {
            problems.push(format!("{name}: no viewBox"));
            continue;
        };
        let size = attr(root, "font-size")
            .and_then(|s| s.parse().ok())
            .unwrap_or(16.0);
        // The first shape drawn is the background: a filled rect over the whole viewBox.
        let first = svg.split('<').find(|t| {
            ["rect", "path", "text", "line", "circle", "g ", "polygon"]
                .iter()
                .any(|s| t.starts_with(s))
        });
        let covers = first.is_some_and(|t| {
            let full =
                |v: Option<&str>, n: f64| v.is_some_and(|v| v == "100%" || v.parse() == Ok(n));
            t.starts_with("rect")
                && attr(t, "x").is_none_or(|x| x == "0")
                && attr(t, "y").is_none_or(|y| y == "0")
                && full(attr(t, "width"), w)
                && full(attr(t, "height"), h)
                && attr(t, "fill").is_some_and(|f| f != "none" && f != "transparent")
        });
        if !covers {
            problems.push(format!(
                "{name}: no opaque background rect over the viewBox first"
            ));
        }
        // Each label's estimated box: left, right, top, bottom, text.
        let mut boxes: Vec<(f64, f64, f64, f64, String)> = vec![];
        for piece in svg.split("<text").skip(1) {
            let (tag, rest) = piece.split_once('>').unwrap();
            let text = rest.split("</text>").next().unwrap_or("");
            let text = text
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            let x: f64 = attr(tag, "x").and_then(|v| v.parse().ok()).unwrap_or(0.0);
            let y: f64 = attr(tag, "y").and_then(|v| v.parse().ok()).unwrap_or(0.0);
            let fs: f64 = attr(tag, "font-size")
                .and_then(|v| v.parse().ok())
                .unwrap_or(size);
            let mono = attr(tag, "font-family").is_some_and(|f| f.contains("mono"));
            let width = text.chars().count() as f64 * fs * if mono { 0.6 } else { 0.55 };
            let (left, right) = match attr(tag, "text-anchor") {
                Some("middle") => (x - width / 2.0, x + width / 2.0),
                Some("end") => (x - width, x),
                _ => (x, x + width),
            };
            if left < 0.0 || right > w || y - fs * 0.8 < 0.0 || y > h {
                problems.push(format!(
                    "{name}: `{text}` at ({x}, {y}) runs outside 0 0 {w} {h}"
                ));
            }
            boxes.push((left, right, y - fs * 0.8, y + fs * 0.2, text));
        }
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                if a.0 < b.1 && b.0 < a.1 && a.2 < b.3 && b.2 < a.3 {
                    problems.push(format!("{name}: labels `{}` and `{}` overlap", a.4, b.4));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_chapter_names_its_puzzles_cases() {
    let mut missing = vec![];
    for (name, md) in chapters()
        .into_iter()
        .filter(|(n, _)| n.starts_with("puzzle-"))
    {
        let id = name.trim_end_matches(".md");
        // The runner lists a puzzle's cases when asked for one it does not have.
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_runner"))
            .args(["check", id, "--backend", "sim", "--case", "no-such-case"])
            .env("NO_COLOR", "1")
            .output()
            .expect("runner runs");
        let said = String::from_utf8_lossy(&out.stderr).to_string();
        let list = said.split("its cases are: ").nth(1).expect(&said).trim();
        for case in list.split(", ") {
            if !md.contains(&format!("`{case}`")) && !md.contains(&format!("case {case}")) {
                missing.push(format!("{name}: `{case}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "cases the chapter never names:\n{}",
        missing.join("\n")
    );
}

/// A Chromium (or Chrome) on the PATH, for the layout test.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|candidate| candidate.is_file())
}

/// Appended to each page: once it has loaded, lists every code block and table of the chapter
/// wider than its box (what a reader would have to scroll sideways), and on a dark theme every
/// figure drawn unframed (a bright card), in a `<div>` that `--dump-dom` prints.
const MEASURE: &str = r#"<script>
window.addEventListener('load', function () {
  var bad = [];
  document.querySelectorAll('main pre, main pre > code, main table, main .table-wrapper').forEach(function (e) {
    if (e.scrollWidth > e.clientWidth + 1) {
      bad.push(e.tagName.toLowerCase() + ' ' + e.scrollWidth + ' px in ' + e.clientWidth + ': ' + e.textContent.replace(/\s+/g, ' ').slice(0, 70));
    }
  });
  var dark = ['navy', 'coal', 'ayu'].some(function (t) { return document.documentElement.classList.contains(t); });
  document.querySelectorAll('main img').forEach(function (e) {
    var style = getComputedStyle(e);
    if (dark && (style.filter === 'none' || style.paddingTop === '0px')) {
      bad.push('img ' + e.getAttribute('src') + ': unframed on a dark theme');
    }
  });
  var out = document.createElement('div');
  out.id = 'fit-result';
  out.textContent = 'FIT ' + window.innerWidth + '\n' + bad.join('\n');
  document.body.appendChild(out);
});
</script></body>"#;

/// What [`MEASURE`] reports for the chapter `name` of the book `built`, opened in `browser` at
/// 1280 px: one line per fault.
fn measure(browser: &Path, built: &Built, name: &str) -> Vec<String> {
    let page = built.0.join(name.replace(".md", ".html"));
    let html = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, html.replacen("</body>", MEASURE, 1)).unwrap();
    let run = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("the browser runs");
    let dom = String::from_utf8_lossy(&run.stdout);
    let Some(result) = dom
        .split("<div id=\"fit-result\">")
        .nth(1)
        .and_then(|r| r.split("</div>").next())
    else {
        return vec![format!(
            "{name}: the page did not report its layout:\n{}",
            String::from_utf8_lossy(&run.stderr)
        )];
    };
    let result = result
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let mut lines = result.lines();
    assert_eq!(lines.next(), Some("FIT 1280"), "{name}: the window's width");
    lines.map(|l| format!("{name}: {l}")).collect()
}

/// At 1280 px, with the sidebar open, no page has a code block or table that scrolls sideways;
/// on the navy theme, the chapters with the most figures show each in its frame.
#[test]
fn code_and_tables_fit_a_1280_px_page_in_chromium() {
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped: no chromium, chromium-browser or google-chrome on PATH (Debian: apt-get install chromium)"
        );
        return;
    };
    let built = Built::new("fit");
    let mut problems = vec![];
    let names: Vec<String> = chapters()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n != "SUMMARY.md")
        .collect();
    assert!(names.len() > 12, "{names:?}");
    for name in &names {
        problems.extend(measure(&browser, &built, name));
    }
    let navy = Built::themed("fit-navy", "navy");
    for name in ["puzzle-08.md", "puzzle-11.md"] {
        problems.extend(measure(&browser, &navy, name));
    }
    assert!(
        problems.is_empty(),
        "code blocks and tables wider than the page at 1280 px, or unframed figures:\n{}",
        problems.join("\n")
    );
}

/// A line of a paragraph that starts with `* `, `+ ` or `- ` (a wrapped `KR * KC\n* IC)`) starts a
/// bullet list in the middle of the paragraph; a list the author meant follows a blank line, a
/// heading or another item.
#[test]
fn no_line_of_a_paragraph_turns_into_a_bullet() {
    let item = |l: &str| {
        let t = l.trim_start();
        ["* ", "+ ", "- "].iter().any(|b| t.starts_with(b))
            || t.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let mut stray = vec![];
    for (name, md) in chapters() {
        let (prose, _) = split(&md);
        let lines: Vec<&str> = prose.lines().collect();
        for (i, pair) in lines.windows(2).enumerate() {
            let [above, line] = pair else { continue };
            let paragraph = !above.trim().is_empty()
                && !above.starts_with([' ', '#', '|', '>', '<', '!'])
                && !item(above);
            // Inside a list, an unindented line continues the item above it.
            let in_list = lines[..i]
                .iter()
                .rev()
                .take_while(|l| !l.trim().is_empty())
                .any(|l| item(l));
            if paragraph && !in_list && item(line) && !line.starts_with(' ') {
                stray.push(format!("{name}: `{line}` after `{above}`"));
            }
        }
    }
    assert!(
        stray.is_empty(),
        "lines that start a list inside a paragraph:\n{}",
        stray.join("\n")
    );
}
