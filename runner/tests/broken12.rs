//! The corpus of broken tensor-core kernels (puzzle 12): each is the reference solution with one
//! mistake made in it, a textual edit of `solutions/puzzle-12.cu` applied here (so the corpus
//! follows the solution and holds no second copy of it), checked by the real runner on the
//! simulator with `--json`, and the diagnosis each must get, at the edited line where the
//! diagnosis has one. The solution itself passes with no diagnostic (`runner validate`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The solution with `find` (which must occur exactly once) replaced by `replace`, written to
/// `NAME.cu` in the tests' scratch folder; with the 1-based line of the edit.
fn mutate(name: &str, find: &str, replace: &str) -> (PathBuf, u64) {
    let src = std::fs::read_to_string(root().join("solutions/puzzle-12.cu")).unwrap();
    assert_eq!(src.matches(find).count(), 1, "{name}: `{find}` not once");
    let at = src.find(find).unwrap();
    let line = src[..at].lines().count() as u64 + u64::from(!src[..at].ends_with('\n'));
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.cu"));
    std::fs::write(&path, src.replacen(find, replace, 1)).unwrap();
    (path, line)
}

/// `runner check puzzle-12 --kernel FILE --backend BACKEND --json [extra]`: passed, diagnostics.
fn check(file: &Path, backend: &str, extra: &[&str]) -> (bool, Vec<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(["check", "puzzle-12", "--kernel"])
        .arg(file)
        .args(["--backend", backend, "--json"])
        .args(extra)
        .current_dir(root())
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let passed = v["passed"].as_bool().unwrap();
    assert_eq!(out.status.code(), Some(if passed { 0 } else { 1 }));
    (passed, v["diagnostics"].as_array().unwrap().clone())
}

/// The diagnostic of `kind`, which must exist.
fn find<'a>(name: &str, d: &'a [Value], kind: &str) -> &'a Value {
    d.iter()
        .find(|x| x["kind"] == kind)
        .unwrap_or_else(|| panic!("{name}: no {kind} in {d:#?}"))
}

fn message(d: &Value) -> &str {
    d["message"].as_str().unwrap()
}
