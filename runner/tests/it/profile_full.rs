//! `runner profile` at full scale stays quick for every puzzle's solution on a machine with no
//! GPU because it simulates a sample of the full case's blocks, not the grid: at most `--blocks`
//! (6 by default) plus, for a persistent grid, the block that probes past the SMs. That bound on
//! work is what is held here; how long it takes is a benchmark's figure (`bench/profile_time.sh`,
//! recorded in bench/RESULTS.md), never a test's, since CI's machine may be loaded. A binary of
//! its own: the tests of one binary run side by side, and five profiles of 2D cases at once (each
//! builds its puzzle's full cases, over a GB) made a 2-core machine page for seconds.

use crate::common;

use common::{profile, profile_row};

/// Blocks `runner profile` simulates by default, and the persistent grid's probe.
const SAMPLE: u64 = 6 + 1;

#[test]
fn every_solution_is_profiled_at_full_scale_from_a_sample_of_its_blocks() {
    for n in 1..=12 {
        let id = format!("puzzle-{n:02}");
        let text = profile(&[id.as_str(), "--solution"]);
        assert!(text.contains("case full"), "{id}: {text}");
        let grid: u64 =
            between(&text, "): ", " blocks of").unwrap_or_else(|| panic!("{id}: {text}"));
        let simulated = between(&text, "simulated ", " of its blocks").unwrap_or(grid);
        assert!(
            simulated <= SAMPLE,
            "{id}: simulated {simulated} of {grid} blocks"
        );
        assert!(
            simulated < grid || grid <= SAMPLE,
            "{id}: a grid of {grid} blocks simulated whole"
        );
        assert!(
            text.contains("predicted on an NVIDIA H100 SXM5 80GB: "),
            "{id}: {text}"
        );
        assert!(
            text.contains("instruction mix (warp-instructions): "),
            "{id}: {text}"
        );
        assert!(profile_row(&text, "kernel").len() >= 7, "{id}");
    }
}

/// The number printed between `before` and `after` on the first line holding both.
fn between(text: &str, before: &str, after: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = &l[l.find(before)? + before.len()..];
        rest[..rest.find(after)?].trim().parse().ok()
    })
}
