//! `check --json`: one line unless `--pretty`, keys in a fixed order, `root` absolute, passing
//! cases without their arrays unless `--full`, and a failing case with the inputs that reproduce
//! it (puzzle 01's teaching case: a[i] = i, b[j] = j).

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn check(extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(root())
        .args(["check", "puzzle-01", "--backend", "sim", "--json"])
        .args(extra)
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn compact_with_keys_in_order_and_an_absolute_root() {
    let text = check(&["--solution", "--case", "example-1"]);
    assert_eq!(text.lines().count(), 1, "{text}");
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap_or(usize::MAX);
    let order = [
        "puzzle",
        "file",
        "root",
        "passed",
        "backends",
        "cases",
        "diagnostics",
    ];
    assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        Path::new(json["root"].as_str().unwrap()).is_absolute(),
        "{text}"
    );
    // A passing case without its arrays; with --full, with them.
    assert!(json["cases"][0].get("output").is_none(), "{text}");
    let full: serde_json::Value =
        serde_json::from_str(&check(&["--solution", "--case", "example-1", "--full"])).unwrap();
    assert_eq!(
        full["cases"][0]["expected"],
        serde_json::json!([5.0, 8.0, 11.0, 14.0, 5.0, 0.0])
    );
    let pretty = check(&["--solution", "--case", "example-1", "--pretty"]);
    assert!(pretty.lines().count() > 10, "{pretty}");
}

#[test]
fn a_failing_case_carries_its_inputs() {
    let text = check(&[
        "--kernel",
        "runner/tests/fixtures/no_guard_far.cu",
        "--case",
        "example-1",
    ]);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let case = &json["cases"][0];
    assert_eq!(case["passed"], false, "{text}");
    assert_eq!(
        case["inputs"]["a"],
        serde_json::json!([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
        "{text}"
    );
    assert_eq!(
        case["inputs"]["b"],
        serde_json::json!([0.0, 1.0, 2.0]),
        "{text}"
    );
    assert!(case.get("output").is_some(), "{text}");
}

#[test]
fn cases_a_timeout_kept_from_running_are_failed_cases_with_their_reason() {
    let text = check(&["--kernel", "runner/tests/fixtures/endless.cu"]);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = json["cases"].as_array().unwrap();
    assert!(cases.len() > 1, "every case is listed: {text}");
    assert!(cases.iter().all(|c| c["passed"] == false), "{text}");
    assert!(
        cases[0].get("not_run").is_none(),
        "the first case ran: {text}"
    );
    for c in &cases[1..] {
        let why = c["not_run"].as_str().unwrap_or_default();
        assert!(why.contains("timed out before it"), "{c}");
    }
}
