//! `runner list` marks a puzzle solved only while its kernel is the one that passed: a kernel
//! edited since is marked `~`, with the date it last passed and the command that checks it again.

use std::path::Path;
use std::process::Command;

#[test]
fn a_kernel_edited_after_it_passed_is_not_marked_solved() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let state = std::env::temp_dir().join(format!("list-state-{}.json", std::process::id()));
    // puzzle-01 passed on 2000-02-29 with a text that is not the skeleton there now; puzzle-02
    // was solved by an older runner that kept no hash: still marked solved.
    std::fs::write(
        &state,
        r#"{"solved": ["puzzle-01", "puzzle-02"], "passed": {"puzzle-01": {"hash": 1, "unix": 951782400}}}"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .arg("--root")
        .arg(root)
        .arg("list")
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", &state)
        .output()
        .expect("runner runs");
    let _ = std::fs::remove_file(&state);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |id: &str| {
        text.lines()
            .find(|l| l.contains(id))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("puzzle-01").starts_with('~'), "{text}");
    assert!(line("puzzle-02").starts_with('✓'), "{text}");
    assert!(
        text.contains(&format!(
            "~ puzzle-01: passed on 2000-02-29, edited since: runner --root {} check puzzle-01",
            root.display()
        )),
        "{text}"
    );
    assert!(text.contains("\n1/"), "{text}");
}
