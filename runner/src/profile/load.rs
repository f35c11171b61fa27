//! What the model is given (`profile::Load`): the case's DRAM traffic, and the simulator's counts
//! of the blocks that ran, per block, with the occupancy and the critical path beside them.

use profile::{Load, Occupancy, Profiler};
use spec::{Arg, Job};

/// The bytes a case moves from and to DRAM at the least: each input read once, each output
/// written once, the constants read once.
pub struct Traffic {
    /// Bytes from and to DRAM.
    pub dram: f64,
    /// Of which written (the outputs).
    pub stores: f64,
}

impl Traffic {
    pub fn of(job: &Job) -> Traffic {
        let written = |a: &Arg| match a {
            Arg::Output { len, .. } => *len as f64 * 4.0,
            // Only the image is written, not its rows' padding.
            Arg::Pitched { rows, cols, .. } => (rows * cols) as f64 * 4.0,
            Arg::Input { .. } | Arg::I32 { .. } => 0.0,
        };
        let stores: f64 = job.args.iter().map(written).sum();
        let dram: f64 = job
            .args
            .iter()
            .map(|a| match a {
                Arg::Input { data, .. } => data.len() as f64 * 4.0,
                out => written(out),
            })
            .sum::<f64>()
            + job
                .constants
                .iter()
                .map(|c| c.data.len() as f64 * 4.0)
                .sum::<f64>();
        Traffic { dram, stores }
    }
}

/// The load of `blocks` blocks whose `runs` simulated ones `prof` counted, at `occupancy`, with
/// `per_sm` blocks of the grid for each SM and a block's critical path `path` (clocks, DRAM
/// share).
pub fn load(
    prof: &Profiler,
    blocks: u64,
    runs: u64,
    traffic: &Traffic,
    occupancy: Option<&Occupancy>,
    per_sm: u64,
    path: Option<(f64, f64)>,
) -> Load {
    let total = prof.total();
    // The warps that have work: as many blocks as fit, or as the grid gives each SM.
    let working = |o: &Occupancy| u64::from(o.blocks).min(per_sm) * u64::from(o.warps_per_block);
    let ran = runs.max(1) as f64;
    let (sync_work, wg_work) = prof.tensor_work();
    Load {
        blocks,
        issued_per_block: prof.sass_issued() as f64 / ran,
        wavefronts_per_block: (total.wavefronts + total.global_wavefronts) as f64 / ran,
        const_addresses_per_block: total.const_addresses as f64 / ran,
        const_requests_per_block: total.const_requests as f64 / ran,
        const_bytes: prof.const_lines.bytes(),
        dram_bytes: traffic.dram,
        mma_sync_flop_per_block: sync_work as f64 / ran,
        wgmma_flop_per_block: wg_work as f64 / ran,
        warps_per_scheduler: occupancy.map(|o| working(o) as f64 / 4.0),
        resident_blocks: occupancy.map(|o| u64::from(o.blocks).min(per_sm)),
        store_bytes: traffic.stores,
        critical_path_cycles: path.map(|p| p.0),
    }
}
