//! A wrong output names the thread that owns it under the puzzle's own launch rule: puzzle 06's
//! thread t owns outputs t * OUTPUTS_PER_THREAD + r of its block, puzzle 07's thread t the rows
//! t, t + THREADS, ... of its block's BLOCK_SIZE outputs. Each reference solution is broken for
//! one thread only (block 1, thread 3 adds 1 to its last output), and the diagnostic must name
//! that thread, not the one a one-output-per-thread rule would.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The solution of `puzzle` with `line` inserted before the line that starts with `before`.
fn broken(puzzle: &str, before: &str, line: &str) -> std::path::PathBuf {
    let src = std::fs::read_to_string(root().join(format!("solutions/{puzzle}.cu"))).unwrap();
    let at = src.find(before).expect("the anchor line");
    let file = std::env::temp_dir().join(format!("{puzzle}-owner-{}.cu", std::process::id()));
    std::fs::write(&file, format!("{}{line}\n{}", &src[..at], &src[at..])).unwrap();
    file
}

/// The first diagnostic of checking `file` against `puzzle` on case `case`.
fn first_diagnostic(puzzle: &str, file: &Path, case: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .arg("--root")
        .arg(root())
        .args([
            "check",
            puzzle,
            "--backend",
            "sim",
            "--json",
            "--case",
            case,
        ])
        .arg("--kernel")
        .arg(file)
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", "/nonexistent/state.json")
        .output()
        .expect("runner runs");
    let _ = std::fs::remove_file(file);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    json["diagnostics"][0].clone()
}

#[test]
fn puzzle_06_names_the_thread_of_its_register_block() {
    let file = broken(
        "puzzle-06",
        "    int mine = first",
        "    if (blockIdx.x == 1 && threadIdx.x == 3) acc[R - 1] += 1.0f;",
    );
    let d = first_diagnostic("puzzle-06", &file, "edge-three-blocks");
    assert_eq!(d["kind"], "wrong_output", "{d}");
    assert_eq!(
        (&d["block"][0], &d["thread"][0]),
        (&1.into(), &3.into()),
        "{d}"
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("(block 1 thread 3)"),
        "{d}"
    );
}

#[test]
fn puzzle_07_names_the_thread_of_its_broadcast_rows() {
    let file = broken(
        "puzzle-07",
        "    // tl.store",
        "    if (blockIdx.x == 1 && threadIdx.x == 3) acc[ROWS - 1] += 1.0f;",
    );
    let d = first_diagnostic("puzzle-07", &file, "edge-three-blocks");
    assert_eq!(d["kind"], "wrong_output", "{d}");
    assert_eq!(
        (&d["block"][0], &d["thread"][0]),
        (&1.into(), &3.into()),
        "{d}"
    );
}
