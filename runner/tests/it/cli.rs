//! CLI tests as data: every `cmd/*.toml` case runs the real `runner` binary and compares its
//! output with the `.stdout`/`.stderr` beside it (`TRYCMD=overwrite` refreshes them after a
//! deliberate change). The fixture kernels live in `fixtures/`.

#[test]
fn cli_cases() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
