//! Run from a folder that is not inside a workbook, the runner uses the copy it was built from and
//! says so on stderr (naming the folder), so `--json` on stdout stays one clean object whose
//! `root` is that folder, absolute.

use std::path::Path;
use std::process::Command;

#[test]
fn outside_a_workbook_the_runner_names_the_folder_it_uses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let elsewhere = std::env::temp_dir().join(format!("not-a-workbook-{}", std::process::id()));
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(&elsewhere)
        .args([
            "check",
            "1",
            "--solution",
            "--case",
            "example-1",
            "--backend",
            "sim",
            "--json",
        ])
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let _ = std::fs::remove_dir(&elsewhere);
    let canonical = std::fs::canonicalize(root).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not inside a workbook")
            && stderr.contains(&canonical.display().to_string()),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(json["root"], canonical.display().to_string());
    assert_eq!(json["passed"], true);
}
