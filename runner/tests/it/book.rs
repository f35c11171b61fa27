//! The book's sample sessions are tests: every ```console block of book/src/*.md whose lines start
//! with `$ runner ...` runs the real binary (trycmd maps `runner` to it), and what it prints must
//! match the block, with `[..]` (part of a line) and `...` (whole lines) where output varies, and
//! `? N` for a nonzero exit status. So the book cannot drift from what the runner prints.
//! Blocks tagged ```text are prose, not tests.

#[test]
fn book_console_blocks() {
    trycmd::TestCases::new()
        .env("NO_COLOR", "1")
        // Hints and progress go nowhere: every run starts from a fresh learner.
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .case("../book/src/**/*.md");
}

/// The introduction's table of diagnostic kinds names each kind in one row.
#[test]
fn the_table_of_kinds_lists_each_kind_once() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../book/src/introduction.md");
    let text = std::fs::read_to_string(path).unwrap();
    let table = text
        .split("### The diagnostic kinds")
        .nth(1)
        .and_then(|t| t.split("\n### ").next())
        .expect("the section of kinds");
    let kinds: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .collect();
    assert!(kinds.len() > 10, "{kinds:?}");
    for k in &kinds {
        let rows = kinds.iter().filter(|x| x == &k).count();
        assert_eq!(rows, 1, "`{k}` has {rows} rows in the table of kinds");
    }
}

/// Every chapter's excerpts of a solution are folded (`<details>`), so a learner reading a chapter
/// top to bottom meets no solution code unasked; chapter 12's excerpts were once open.
#[test]
fn solution_excerpts_are_folded_in_every_chapter() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../book/src");
    let mut chapters = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("puzzle-") || !name.ends_with(".md") {
            continue;
        }
        chapters += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let mut depth = 0i32;
        for (n, line) in text.lines().enumerate() {
            depth += line.matches("<details>").count() as i32;
            depth -= line.matches("</details>").count() as i32;
            if line.contains("{{#include ../../solutions/") {
                assert!(depth > 0, "{name}:{}: an open solution excerpt", n + 1);
            }
        }
    }
    assert!(chapters >= 12, "{chapters} chapters");
}

/// "The code to complete" includes the learner's own `kernel.cu`, so once it is edited the built
/// chapter shows their code, not the skeleton: every chapter says so where it shows the file.
#[test]
fn the_code_to_complete_says_it_is_the_learners_file() {
    for n in 1..=12 {
        let path = format!(
            "{}/../book/src/puzzle-{n:02}.md",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let section = text
            .split("## The code to complete")
            .nth(1)
            .and_then(|s| s.split("```cpp").next())
            .unwrap_or_else(|| panic!("{path}: no section"));
        let file = format!("`puzzles/puzzle-{n:02}/kernel.cu`, as it was when the book was built");
        assert!(section.contains(&file), "{path}: {section}");
    }
}
