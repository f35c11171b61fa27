//! The GPU model of `runner profile`: one named GPU's constants, each with its source, and the
//! predicted time of a kernel from the simulator's counts (`profile`).
//!
//! Six bounds, the largest names the kernel's bottleneck (a roofline with six roofs; the GPU's
//! constants and their sources are `h100`'s), and a seventh time combines them with each warp's
//! critical path where the warps resident at once are too few for either to dominate (queued,
//! below); the prediction is the larger of the two:
//! - issue: warp-instructions over the SMs' schedulers, 4 per SM, one warp-instruction per clock
//!   each. The counts are PTX instructions; `ptxas` folds some address arithmetic and unrolls,
//!   so this is the PTX's view, not SASS's, except for integer division, which the SASS spells
//!   out in about twenty instructions (`ptx::ir::Op::sass_extra`).
//! - A kernel that uses the tensor cores runs at a lower SM clock (`Gpu::tensor_clock_ghz`,
//!   measured): its issue, shared and constant bounds count their clocks at that one.
//! - shared (L1 data path): the SM's L1 and shared memory process one wavefront per clock:
//!   shared wavefronts (one per bank conflict's worth of words) plus the wavefronts of global
//!   loads and stores (L1 and shared memory are one unit on Hopper). A global request takes one
//!   wavefront for every 4 cache lines it touches (`profile`), so a coalesced request, or one
//!   touching two lines, is one wavefront, as `ncu` counts it.
//! - constant: the constant cache serves one distinct address per clock, so a warp's request for
//!   `n` different addresses is `n` requests, one after the other. A kernel whose constants
//!   overflow the SM's constant cache while more warps are resident than it has lines
//!   (`constcache::misses`) misses on every constant request, each holding the SM's constant path
//!   `Gpu::const_miss_cycles`.
//! - memory: the bytes every run must move from and to DRAM (each input read once, each output
//!   written once) at the copy bandwidth measured on the device.
//! - tensor: the tensor cores' products (`mma.sync`, `wmma.mma`, `wgmma`) at the rates measured on
//!   the device, each pipe's work over its rate (a kernel that uses none has no tensor bound).
//!   A `wgmma`'s B operand is read from shared memory once for its warpgroup (the simulator
//!   shows a profile the first warp's reads only).
//! - stores after the products: a tensor-core kernel stores its tile once its products are
//!   done; with one block resident per SM nothing else on the SM works meanwhile, so the
//!   output's bytes at DRAM bandwidth add to the tensor bound (`Prediction::stores`; round 13 of
//!   `lab/igemm/README.md` measured puzzle 11's Hopper store at 17-18 us of N8: this gives 23).
//! - latency: a scheduler issues a warp's next instruction only once the one it depends on is
//!   done, `Gpu::dependent_issue_cycles` later for the arithmetic pipes, so with `W` warps
//!   resident per scheduler it issues at most `W / 4` per clock (Little's law: each warp's chain
//!   of dependent instructions, its critical path, times the waves of warps). `W` is the
//!   occupancy's (`occupancy`: registers per thread from the CUBIN, shared memory, threads),
//!   capped by the blocks the grid gives each SM. Below 4 warps per scheduler this bound
//!   exceeds the issue bound. It is generalised by each block's critical path (`critical`: the
//!   clocks a block's longest warp takes alone, following its registers through its loads at
//!   the L1, L2 and DRAM latencies and its arithmetic at the dependent-issue one): the blocks an
//!   SM runs, in waves of those resident at once, each wave a block's path (`Prediction::chain`,
//!   Little's law). The larger of the two is the latency bound.
//! - queued: the bounds above assume that issue, the L1 data path, the constant path, DRAM and
//!   each warp's waits overlap perfectly. `queueing` instead treats each scheduler's resident
//!   warps as a closed queueing network, solved exactly by mean value analysis: in each wave a
//!   warp is served by its scheduler (its share of the issue bound), by a quarter of the SM's L1
//!   data path, constant path and DRAM share (theirs), and waits out the rest of its block's
//!   critical path at a delay (`Prediction::queued`). With many warps it tends to the largest
//!   of those bounds, with one to the path; where they are close (puzzle 09's one thread per
//!   output: issue 64 us, path 63 us in 62 waves of 16 warps a scheduler) it is above both
//!   (81 us; 113 measured). It does not take in the tensor bound, whose rates were measured as
//!   whole kernels' times rather than as a pipe's service per instruction.
//!
//! Work is spread over the SMs in whole blocks: the busiest SM runs `ceil(blocks / SMs)` of them,
//! so a grid of 133 blocks costs two blocks' time, as on the device.

use crate::h100::Gpu;
use crate::{constcache, queueing};

/// The kernel's work per block (average of the sampled blocks) and the launch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    pub blocks: u64,
    pub issued_per_block: f64,
    /// Shared wavefronts plus global L1 wavefronts per block.
    pub wavefronts_per_block: f64,
    /// Distinct constant addresses, summed over the constant requests, per block.
    pub const_addresses_per_block: f64,
    /// Warp requests for constants per block.
    pub const_requests_per_block: f64,
    /// The constants the kernel reads, bytes (whole cache lines).
    pub const_bytes: f64,
    /// Bytes that must cross DRAM for the whole launch.
    pub dram_bytes: f64,
    /// Tensor-core work per block, tf32 FLOP, through `mma.sync` and through `wgmma`.
    pub mma_sync_flop_per_block: f64,
    pub wgmma_flop_per_block: f64,
    /// Warps resident per scheduler that have work (`occupancy`, capped by the grid); `None`
    /// where the register count is not known, and no latency bound.
    pub warps_per_scheduler: Option<f64>,
    /// Blocks resident per SM that have work, likewise.
    pub resident_blocks: Option<u64>,
    /// Bytes the launch writes to its outputs.
    pub store_bytes: f64,
    /// Clocks a block takes alone: its longest warp's critical path (`critical`), the sampled
    /// blocks' mean; `None` where not followed.
    pub critical_path_cycles: Option<f64>,
}

/// The six bounds and which one binds, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub issue: f64,
    pub shared: f64,
    pub constant: f64,
    /// The part of `constant` spent on constant cache misses (`constcache::misses`); the bound is named
    /// after them where they are most of it.
    pub constant_misses: f64,
    pub memory: f64,
    /// Zero where the kernel uses no tensor cores.
    pub tensor: f64,
    /// The stores that follow the tensor bound's products where one block is resident per SM
    /// (zero elsewhere): the two add up.
    pub stores: f64,
    /// The issue bound at the rate the resident warps' dependencies allow (the issue bound or
    /// more), or `chain` where that is longer.
    pub latency: f64,
    /// The blocks each SM runs, in waves of the blocks resident at once, each wave as long as a
    /// block's critical path (Little's law); zero where either is not known.
    pub chain: f64,
    /// The same waves, each as long as a scheduler's resident warps take to go once round the
    /// issue slots, the L1 data path, the constant path, DRAM and the rest of their critical
    /// path, queued (`queueing::cycle_clocks`); zero where the path or the occupancy is not
    /// known. At least each of the issue, shared, constant, memory and chain bounds.
    pub queued: f64,
}

impl Prediction {
    /// The predicted time: the largest bound, or the queued time where that is longer.
    pub fn seconds(&self) -> f64 {
        self.largest_bound().max(self.queued)
    }

    /// The largest of the six bounds, which names the bottleneck.
    pub fn largest_bound(&self) -> f64 {
        self.issue
            .max(self.shared)
            .max(self.constant)
            .max(self.memory)
            .max(self.tensor + self.stores)
            .max(self.latency)
    }

    /// What limits the kernel: the largest bound's name (queueing adds to it, but does not
    /// change which resource is the busiest).
    pub fn bound(&self) -> &'static str {
        let t = self.largest_bound();
        if t == self.issue {
            "issue-bound"
        } else if t == self.latency && self.chain == self.latency {
            "latency-bound (each warp's chain of dependent loads and arithmetic, too few warps to hide it)"
        } else if t == self.latency {
            "latency-bound (too few warps per scheduler to hide dependencies)"
        } else if t == self.shared {
            "shared-bound (L1/shared data path)"
        } else if t == self.constant && 2.0 * self.constant_misses > self.constant {
            "constant-bound (constant cache misses)"
        } else if t == self.constant {
            "constant-bound (distinct constant addresses)"
        } else if t == self.tensor + self.stores && self.stores > 0.0 {
            "tensor-bound (tensor cores, and the stores after them: one block per SM)"
        } else if t == self.tensor {
            "tensor-bound (tensor cores)"
        } else {
            "memory-bound (DRAM)"
        }
    }
}

/// The time `load` takes on `gpu`.
pub fn predict(gpu: &Gpu, load: &Load) -> Prediction {
    let per_sm = load.blocks.div_ceil(u64::from(gpu.sms).max(1)) as f64;
    let tensor_cores = load.mma_sync_flop_per_block + load.wgmma_flop_per_block > 0.0;
    let clock = if tensor_cores {
        gpu.tensor_clock_ghz
    } else {
        gpu.clock_ghz
    } * 1e9;
    let issue = per_sm * load.issued_per_block / (gpu.issue_per_sm * clock);
    let hidden = load
        .warps_per_scheduler
        .map_or(1.0, |w| (w / gpu.dependent_issue_cycles).min(1.0));
    let warps_per_sm = load.warps_per_scheduler.map(|w| w * 4.0);
    let misses = constcache::misses(
        gpu.const_cache_bytes,
        warps_per_sm,
        load.const_bytes,
        load.const_requests_per_block,
    );
    let constant_misses = per_sm * misses * gpu.const_miss_cycles / clock;
    let stores = if tensor_cores && load.resident_blocks == Some(1) {
        load.store_bytes / gpu.dram_bytes_per_s
    } else {
        0.0
    };
    // The blocks each SM runs in waves of the resident ones, and a block's path, where known.
    let waves = match (load.critical_path_cycles, load.resident_blocks) {
        (Some(path), Some(resident)) if resident > 0 => Some((per_sm / resident as f64, path)),
        _ => None,
    };
    let chain = waves.map_or(0.0, |(waves, path)| waves * path / clock);
    let latency = if hidden > 0.0 { issue / hidden } else { issue };
    let shared = per_sm * load.wavefronts_per_block / (gpu.l1_wavefronts_per_sm * clock);
    let constant = per_sm * load.const_addresses_per_block / (gpu.const_addresses_per_sm * clock)
        + constant_misses;
    let memory = load.dram_bytes / gpu.dram_bytes_per_s;
    let n = load.warps_per_scheduler.unwrap_or(0.0);
    let queued = match waves {
        Some((waves, path)) if n > 0.0 => {
            // Each warp's demand at a station: the station's bound, in clocks, over the waves and
            // the scheduler's warps; the delay is the rest of its block's path beyond its issue.
            let demands = [issue, shared, constant, memory].map(|b| b * clock / (waves * n));
            let delay = (path - demands[0]).max(0.0);
            waves * queueing::cycle_clocks(n, &demands, delay) / clock
        }
        _ => 0.0,
    };
    Prediction {
        issue,
        latency: latency.max(chain),
        chain,
        queued,
        shared,
        constant,
        constant_misses,
        memory,
        tensor: per_sm
            * (load.mma_sync_flop_per_block / gpu.mma_sync_flop_per_sm
                + load.wgmma_flop_per_block / gpu.wgmma_flop_per_sm)
            / (gpu.clock_ghz * 1e9),
        stores,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::H100;

    #[test]
    fn the_largest_bound_wins_and_whole_blocks_go_to_each_sm() {
        let load = |blocks| Load {
            blocks,
            issued_per_block: 4.0 * 1.98e9,
            wavefronts_per_block: 0.5 * 1.98e9,
            const_addresses_per_block: 0.75 * 1.98e9,
            dram_bytes: 2.822e12 * 0.25,
            ..Default::default()
        };
        let one = predict(&H100, &load(132));
        assert!((one.issue - 1.0).abs() < 1e-9 && (one.shared - 0.5).abs() < 1e-9);
        assert!((one.constant - 0.75).abs() < 1e-9 && (one.memory - 0.25).abs() < 1e-9);
        assert_eq!((one.seconds(), one.bound()), (one.issue, "issue-bound"));
        // One block more than the SMs: the busiest SM runs two.
        assert!((predict(&H100, &load(133)).issue - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_warp_reading_32_constant_addresses_waits_for_32_of_them() {
        // One block per SM, each issuing 8,000 warp-instructions of which 1,000 constant loads:
        // uniform (1 address each), then indexed by the thread (32 each).
        let load = |addresses: f64| Load {
            blocks: 132,
            issued_per_block: 8000.0,
            const_addresses_per_block: 1000.0 * addresses,
            ..Default::default()
        };
        let uniform = predict(&H100, &load(1.0));
        assert_eq!(uniform.bound(), "issue-bound");
        let indexed = predict(&H100, &load(32.0));
        assert!((indexed.constant / uniform.constant - 32.0).abs() < 1e-9);
        assert_eq!(
            indexed.bound(),
            "constant-bound (distinct constant addresses)"
        );
    }

    #[test]
    fn tensor_work_is_timed_at_each_pipes_measured_rate() {
        // One block per SM: 18,720 mma.sync m16n8k8 tf32 per sub-partition (puzzle 12's mma.sync
        // path) at 7.8 clocks each; a warpgroup's 36 x 4 m64n256k8 wgmma's (puzzle 11's tile).
        let load = |sync: f64, wg: f64| Load {
            blocks: 132,
            mma_sync_flop_per_block: sync,
            wgmma_flop_per_block: wg,
            ..Default::default()
        };
        let sync = predict(&H100, &load(4.0 * 18720.0 * 2048.0, 0.0));
        assert!((sync.tensor * 1.98e9 - 18720.0 * 7.8).abs() < 1e-3);
        assert_eq!(sync.bound(), "tensor-bound (tensor cores)");
        let wg = predict(&H100, &load(0.0, 144.0 * 64.0 * 256.0 * 8.0 * 2.0));
        assert!((wg.tensor * 1e6 - 144.0 * 262144.0 / 480e12 * 132.0 * 1e6).abs() < 1e-6);
        assert_eq!(predict(&H100, &load(0.0, 0.0)).tensor, 0.0);
    }

    #[test]
    fn a_kernel_on_the_tensor_cores_issues_at_the_lower_clock_it_runs_at() {
        // 1.98e9 warp-instructions per SM: one second at the boost clock, 1.98 / 1.81 with the
        // tensor cores busy; the tensor bound (rates measured as times) does not move.
        let load = |sync: f64| Load {
            blocks: 132,
            issued_per_block: 4.0 * 1.98e9,
            mma_sync_flop_per_block: sync,
            ..Default::default()
        };
        assert!((predict(&H100, &load(0.0)).issue - 1.0).abs() < 1e-9);
        let busy = predict(&H100, &load(4.0 * 2048.0 * 1000.0));
        assert!((busy.issue - 1.98 / 1.81).abs() < 1e-9);
        assert!((busy.tensor * 1.98e9 - 1000.0 * 7.8).abs() < 1e-3);
    }

    #[test]
    fn with_one_block_an_sm_a_tensor_kernels_stores_come_after_its_products() {
        // One m64n256k8 tf32 wgmma's worth of products a second per SM, and 0.5 s of stores at
        // DRAM bandwidth: one block resident per SM adds them up; two overlap them (max).
        let load = |resident: Option<u64>, wg: f64| Load {
            blocks: 132,
            wgmma_flop_per_block: wg * H100.wgmma_flop_per_sm * 1.98e9,
            store_bytes: 0.5 * 2.822e12,
            dram_bytes: 0.5 * 2.822e12,
            resident_blocks: resident,
            ..Default::default()
        };
        let one = predict(&H100, &load(Some(1), 1.0));
        assert!((one.tensor - 1.0).abs() + (one.stores - 0.5).abs() < 1e-9);
        assert!((one.seconds() - 1.5).abs() < 1e-9, "{one:?}");
        let then = "tensor-bound (tensor cores, and the stores after them: one block per SM)";
        assert_eq!(one.bound(), then);
        for p in [load(Some(2), 1.0), load(None, 1.0)].map(|l| predict(&H100, &l)) {
            assert!(p.stores == 0.0 && (p.seconds() - 1.0).abs() < 1e-9, "{p:?}");
            assert_eq!(p.bound(), "tensor-bound (tensor cores)");
        }
        // Without tensor work, no stores term: the memory bound alone.
        let p = predict(&H100, &load(Some(1), 0.0));
        assert_eq!((p.stores, p.bound()), (0.0, "memory-bound (DRAM)"));
    }

    #[test]
    fn fewer_than_4_warps_a_scheduler_issue_at_most_w_over_4_a_clock() {
        // Puzzle 11's solution: 2 blocks of 4 warps per SM (221 registers), 2 per scheduler.
        let load = |w: Option<f64>| Load {
            blocks: 132,
            issued_per_block: 4.0 * 1.98e9,
            warps_per_scheduler: w,
            ..Default::default()
        };
        let two = predict(&H100, &load(Some(2.0)));
        assert!((two.issue - 1.0).abs() < 1e-9 && (two.latency - 2.0).abs() < 1e-9);
        assert_eq!(
            two.bound(),
            "latency-bound (too few warps per scheduler to hide dependencies)"
        );
        // Four or more hide the 4 clocks; an unknown register count gives no latency bound.
        for w in [Some(4.0), Some(16.0), None] {
            let p = predict(&H100, &load(w));
            assert_eq!((p.latency, p.bound()), (p.issue, "issue-bound"));
        }
    }

    #[test]
    fn blocks_wait_their_critical_path_in_waves_of_the_resident_ones() {
        // 16 blocks per SM, 8 resident at once, each taking 1.98e9 clocks alone: two waves of a
        // second each, though every warp issues little.
        let load = |path: Option<f64>, resident: Option<u64>| Load {
            blocks: 132 * 16,
            issued_per_block: 1000.0,
            critical_path_cycles: path,
            resident_blocks: resident,
            warps_per_scheduler: Some(16.0),
            ..Default::default()
        };
        let p = predict(&H100, &load(Some(1.98e9), Some(8)));
        assert!(
            (p.chain - 2.0).abs() < 1e-9 && p.latency == p.chain,
            "{p:?}"
        );
        assert_eq!(
            p.bound(),
            "latency-bound (each warp's chain of dependent loads and arithmetic, too few warps to hide it)"
        );
        // No path followed, or no occupancy known: no such bound.
        for p in [load(None, Some(8)), load(Some(1.98e9), None)].map(|l| predict(&H100, &l)) {
            assert_eq!((p.chain, p.bound()), (0.0, "issue-bound"));
        }
    }
}
