//! `runner watch` as a learner uses it: it checks the skeleton at once, checks again when the file
//! is saved, and on a pass marks the puzzle solved and checks the next one at once; it never tells
//! the learner to run a check (it is already watching).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A workbook root holding only the files the test touches: puzzles 01 and 02 as skeletons.
fn scratch_root() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let root = std::env::temp_dir().join(format!("watch-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for p in ["puzzle-01", "puzzle-02"] {
        let dir = root.join("puzzles").join(p);
        std::fs::create_dir_all(&dir).unwrap();
        let skeleton = repo.join("puzzles").join(p).join("kernel.cu");
        std::fs::copy(skeleton, dir.join("kernel.cu")).unwrap();
    }
    std::fs::create_dir_all(root.join("solutions")).unwrap();
    root
}

/// Kills the watcher when the test ends, passed or not.
struct Watching(Child);

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads lines until one contains `want`; everything read so far on failure.
fn wait_for(lines: &Receiver<String>, want: &str, seen: &mut String) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !seen.contains(want) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            Err(_) => panic!("no `{want}` within 120 s; the watcher printed:\n{seen}"),
        }
    }
}

#[test]
fn watch_checks_on_save_and_moves_on_after_a_pass() {
    let root = scratch_root();
    let state = root.join("state.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(["--root".as_ref(), root.as_os_str(), "watch".as_ref()])
        .args(["--backend", "sim"])
        .env("NO_COLOR", "1")
        .env("WORKBOOK_STATE", &state)
        .stdout(Stdio::piped())
        .spawn()
        .expect("runner runs");
    let stdout = child.stdout.take().unwrap();
    let _watching = Watching(child);
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    // No puzzle solved yet: it starts with puzzle 01, whose skeleton fails.
    wait_for(&lines, "✗ puzzle-01", &mut seen);
    wait_for(
        &lines,
        "Watching puzzles/puzzle-01/kernel.cu: save it",
        &mut seen,
    );

    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let solution = std::fs::read(repo.join("solutions/puzzle-01.cu")).unwrap();
    std::fs::write(root.join("puzzles/puzzle-01/kernel.cu"), solution).unwrap();
    wait_for(&lines, "✓ puzzle-01 passed", &mut seen);
    // The next puzzle is checked at once: its skeleton fails, and the watcher waits for a save.
    wait_for(&lines, "✗ puzzle-02", &mut seen);
    wait_for(
        &lines,
        "Watching puzzles/puzzle-02/kernel.cu: save it to check again",
        &mut seen,
    );
    assert!(!seen.contains("Fix it, then run"), "{seen}");
    let saved = std::fs::read_to_string(&state).unwrap();
    assert!(saved.contains("\"puzzle-01\""), "{saved}");
    let _ = std::fs::remove_dir_all(&root);
}
