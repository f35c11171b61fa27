//! `runner validate` over the real workbook, as part of the README's test command: every solution
//! passes on the simulator (and on the GPU where there is one), every skeleton fails, skeleton and
//! solution agree outside the learner's part, the book's links resolve and the book builds.

use std::path::Path;
use std::process::Command;

#[test]
fn the_workbook_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .arg("validate")
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    assert!(
        out.status.success(),
        "runner validate failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("puzzles and the book are in order"),
        "{stdout}"
    );
    // Without a GPU it says what it did not run.
    let gpu = std::path::Path::new("/dev/nvidiactl").exists();
    assert_eq!(
        stdout.contains(
            "not run here (no CUDA GPU): the solutions on the GPU, and every full-scale case"
        ),
        !gpu,
        "{stdout}"
    );
}
