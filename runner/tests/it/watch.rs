//! `runner watch` as a learner uses it: it checks the skeleton at once, checks again when the file
//! is saved, and on a pass marks the puzzle solved and checks the next one at once; it never tells
//! the learner to run a check (it is already watching).

use crate::common;

use common::{Watching, repo, runner, scratch_root};

#[test]
fn watch_checks_on_save_and_moves_on_after_a_pass() {
    let root = scratch_root("watch-test");
    let state = root.join("state.json");
    let mut w = Watching::start(&runner(), &root, "sim");
    // No puzzle solved yet: it starts with puzzle 01, whose skeleton fails.
    w.wait_for("✗ puzzle-01");
    w.wait_for("Watching puzzles/puzzle-01/kernel.cu: save it");

    let solution = std::fs::read(repo().join("solutions/puzzle-01.cu")).unwrap();
    std::fs::write(root.join("puzzles/puzzle-01/kernel.cu"), solution).unwrap();
    w.wait_for("✓ puzzle-01 passed");
    // The next puzzle is checked at once: its skeleton fails, and the watcher waits for a save.
    w.wait_for("✗ puzzle-02");
    w.wait_for("Watching puzzles/puzzle-02/kernel.cu: save it to check again");
    assert!(!w.seen.contains("Fix it, then run"), "{}", w.seen);
    let saved = std::fs::read_to_string(&state).unwrap();
    assert!(saved.contains("\"puzzle-01\""), "{saved}");
    let _ = std::fs::remove_dir_all(&root);
}
