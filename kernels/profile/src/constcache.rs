//! The SM's constant cache in `runner profile`'s model: which constants a kernel reads (`Lines`,
//! collected by the profiler from the simulator's accesses) and which of its constant requests
//! miss the first-level constant cache (`misses`), each miss costing the SM's constant path
//! `Gpu::const_miss_cycles` on top of the constant bound's clock per address.

use ptx::ir::Space;
use std::collections::BTreeSet;

/// Bytes of a line of the SM's constant cache (Jia et al. 2018, Volta's constant L1 cache).
pub const LINE_BYTES: usize = 64;

/// The constant cache lines a kernel's sampled blocks read: (buffer, line).
#[derive(Debug, Default)]
pub struct Lines(BTreeSet<(usize, usize)>);

impl Lines {
    /// Bytes `first..=last` of buffer `buf`, where `space` is the constant space.
    pub fn record(&mut self, space: Space, buf: usize, first: usize, last: usize) {
        if space == Space::Const {
            self.0
                .extend((first / LINE_BYTES..=last / LINE_BYTES).map(|l| (buf, l)));
        }
    }

    /// The constants read, bytes (whole lines).
    pub fn bytes(&self) -> f64 {
        (self.0.len() * LINE_BYTES) as f64
    }
}

/// Of `requests` constant requests, those that miss a constant cache of `cache_bytes`: all of
/// them where the `const_bytes` the kernel reads overflow it and the resident warps, each reading
/// its own line, are more than its lines (an LRU cache, a warp's line evicted by the other warps'
/// before it comes back to it); else none (the first read of each line aside). Without a known
/// occupancy (`warps_per_sm`), none.
pub fn misses(cache_bytes: f64, warps_per_sm: Option<f64>, const_bytes: f64, requests: f64) -> f64 {
    let lines = cache_bytes / LINE_BYTES as f64;
    if const_bytes > cache_bytes && warps_per_sm.is_some_and(|w| w > lines) {
        requests
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_each_64_byte_line_of_each_constant_buffer_once() {
        let mut l = Lines::default();
        l.record(Space::Const, 0, 0, 3);
        l.record(Space::Const, 0, 60, 67);
        l.record(Space::Const, 1, 0, 3);
        l.record(Space::Shared, 0, 4096, 4099);
        assert_eq!(l.bytes(), 3.0 * 64.0);
    }

    #[test]
    fn constants_overflowing_the_cache_with_more_warps_than_its_lines_miss_on_every_request() {
        // Puzzle 05's solution: 8 KB of taps, 64 warps a SM against the 2 KB cache's 32 lines.
        assert_eq!(misses(2048.0, Some(64.0), 8192.0, 1000.0), 1000.0);
        // Puzzle 06's 24 warps a SM, constants that fit, or an unknown occupancy: none.
        for (w, bytes) in [(Some(24.0), 8192.0), (Some(64.0), 2048.0), (None, 8192.0)] {
            assert_eq!(misses(2048.0, w, bytes, 1000.0), 0.0);
        }
    }
}
