//! Which blocks of a full-scale case `profile` simulates: a sample spread over the grid, and, for
//! a kernel that reads `%nsmid` on a grid wider than the H100's SMs, the plan for a persistent
//! grid (the sample drawn from the first blocks of each row, plus the grid's last block as a
//! probe) and the verdict on it once the probe has run.

/// The blocks to simulate, and how a possibly persistent grid is probed.
pub struct Plan {
    /// The blocks to simulate (`None`: every block, a small case whole).
    pub sample: Option<Vec<[u32; 3]>>,
    /// A kernel that reads `%nsmid` on a grid wider than the SMs, sampled: the last block is the
    /// probe.
    pub wide: bool,
    /// The first blocks of each row, as many as SMs: the work of a persistent grid.
    pub first: [u32; 3],
    pub probe: [u32; 3],
}

/// The plan for a grid of `grid` on `sms` SMs: `sample` blocks of a full-scale case (`sampled`),
/// every block of a small one. A kernel that reads %nsmid is told the H100's SMs. A persistent
/// one gives work to the first blocks of each row (as many as SMs) and returns from the rest at
/// once, so where the grid is wider than that the sample is drawn from those first blocks, plus
/// the grid's last block as a probe: if the probe read and wrote no memory (it returned before
/// any work), the counts are scaled to the first blocks only ([`persistent`]).
pub fn plan(grid: [u32; 3], sms: u32, sampled: bool, reads_nsmid: bool, sample: u64) -> Plan {
    let wide = sampled && reads_nsmid && grid[0] > sms;
    let first = [grid[0].min(sms), grid[1], grid[2]];
    let probe = [grid[0] - 1, grid[1] - 1, grid[2] - 1];
    let sample = sampled.then(|| {
        let mut s = sample_blocks(if wide { first } else { grid }, sample.max(1));
        if wide {
            s.push(probe);
        }
        s
    });
    Plan {
        sample,
        wide,
        first,
        probe,
    }
}

/// Whether the grid was persistent, from each block run and the memory it touched
/// (`Profiler::block_accesses`), and how many blocks ran among the first of each row.
pub fn persistent(plan: &Plan, block_accesses: &[([u32; 3], u64)], sms: u32) -> (bool, u64) {
    let (within, beyond): (Vec<&([u32; 3], u64)>, Vec<_>) =
        block_accesses.iter().partition(|b| b.0[0] < sms);
    let persistent = plan.wide && !beyond.is_empty() && beyond.iter().all(|b| b.1 == 0);
    (persistent, within.len() as u64)
}

/// Up to `n` blocks spread evenly over a grid of `grid` (the first and the last included).
pub fn sample_blocks(grid: [u32; 3], n: u64) -> Vec<[u32; 3]> {
    let total: u64 = grid.iter().map(|&g| u64::from(g)).product();
    let n = n.min(total);
    let pick = |k: u64| {
        let lin = if n <= 1 { 0 } else { k * (total - 1) / (n - 1) };
        let x = (lin % u64::from(grid[0])) as u32;
        let y = ((lin / u64::from(grid[0])) % u64::from(grid[1])) as u32;
        let z = (lin / (u64::from(grid[0]) * u64::from(grid[1]))) as u32;
        [x, y, z]
    };
    let mut blocks: Vec<[u32; 3]> = (0..n).map(pick).collect();
    blocks.dedup();
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_spread_over_the_grid_and_include_both_ends() {
        assert_eq!(
            sample_blocks([10, 1, 1], 3),
            vec![[0, 0, 0], [4, 0, 0], [9, 0, 0]]
        );
        assert_eq!(sample_blocks([2, 2, 1], 8).len(), 4);
        assert_eq!(sample_blocks([5, 1, 1], 1), vec![[0, 0, 0]]);
    }
}
