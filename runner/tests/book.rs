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
