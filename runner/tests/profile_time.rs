//! `runner profile` answers within 10 s at full scale (a sample of its blocks) for every puzzle's
//! solution, on a machine with no GPU. A binary of its own: the tests of one binary run side by
//! side, and five profiles of 2D cases at once (each builds its puzzle's full cases, over a GB)
//! made a 2-core machine page for seconds. The first profile of a puzzle on a machine also
//! computes its full cases' references, once, into the cache (puzzle 09 cold: 8.3 s here, warm
//! 4.6 s); the time asserted is a warm run's, what a learner sees from the second time on.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

fn profile(id: &str) -> String {
    let out = Command::new(common::runner())
        .current_dir(common::repo())
        .args(["profile", "--color", "never", id, "--solution"])
        .output()
        .expect("runner runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn every_solution_is_profiled_at_full_scale_within_ten_seconds() {
    for n in 1..=12 {
        let id = format!("puzzle-{n:02}");
        profile(&id); // the references, computed once and cached
        let start = Instant::now();
        let text = profile(&id);
        let took = start.elapsed();
        eprintln!("{id}: {took:?}");
        assert!(took < Duration::from_secs(10), "{id}: {took:?}");
        assert!(text.contains("case full"), "{id}: {text}");
        assert!(
            text.contains("predicted on an NVIDIA H100 SXM5 80GB: "),
            "{id}: {text}"
        );
        assert!(
            text.contains("instruction mix (warp-instructions): "),
            "{id}: {text}"
        );
        let kernel_row = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some("kernel"))
            .unwrap_or_else(|| panic!("{id}: no kernel row in\n{text}"));
        assert!(kernel_row.split_whitespace().count() >= 7, "{id}");
    }
}
