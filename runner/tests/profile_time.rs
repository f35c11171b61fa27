//! `runner profile` answers within 10 s at full scale (a sample of its blocks) for every puzzle's
//! solution, on a machine with no GPU. A binary of its own: the tests of one binary run side by
//! side, and five profiles of 2D cases at once (each builds its puzzle's full cases, over a GB)
//! made a 2-core machine page for seconds. The first profile of a puzzle on a machine also
//! computes its full cases' references, once, into the cache (puzzle 09 cold: 8.3 s here, warm
//! 4.6 s); the time asserted is a warm run's, what a learner sees from the second time on.

mod common;

use common::{profile, profile_row};
use std::time::{Duration, Instant};

#[test]
fn every_solution_is_profiled_at_full_scale_within_ten_seconds() {
    for n in 1..=12 {
        let id = format!("puzzle-{n:02}");
        let args = [id.as_str(), "--solution"];
        profile(&args); // the references, computed once and cached
        let start = Instant::now();
        let text = profile(&args);
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
        assert!(profile_row(&text, "kernel").len() >= 7, "{id}");
    }
}
