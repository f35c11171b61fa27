//! The GPU model of `runner profile`: one named GPU's constants, each with its source, and the
//! predicted time of a kernel from the simulator's counts (`profile`).
//!
//! Three bounds, the largest wins (a roofline with three roofs):
//! - issue: warp-instructions over the SMs' schedulers, 4 per SM, one warp-instruction per clock
//!   each. The counts are PTX instructions; `ptxas` folds some address arithmetic and unrolls,
//!   so this is the PTX's view, not SASS's.
//! - shared (L1 data path): the SM's L1 and shared memory deliver 128 bytes per clock, one
//!   wavefront: shared wavefronts plus the wavefronts of global loads and stores (one per
//!   128-byte line a request touches; L1 and shared memory are one unit on Hopper).
//! - memory: the bytes every run must move from and to DRAM (each input read once, each output
//!   written once) over the HBM bandwidth.
//!
//! Work is spread over the SMs in whole blocks: the busiest SM runs `ceil(blocks / SMs)` of them,
//! so a grid of 133 blocks costs two blocks' time, as on the device.

/// One GPU's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gpu {
    pub name: &'static str,
    pub sms: u32,
    /// Boost clock, GHz.
    pub clock_ghz: f64,
    /// Warp-instructions issued per SM per clock.
    pub issue_per_sm: f64,
    /// Wavefronts (128 bytes) of the L1/shared data path per SM per clock.
    pub l1_wavefronts_per_sm: f64,
    /// DRAM bandwidth, bytes per second.
    pub dram_bytes_per_s: f64,
}

/// NVIDIA H100 SXM5 80GB.
/// - 132 SMs and a boost clock of 1,980 MHz: NVIDIA H100 Tensor Core GPU Architecture whitepaper
///   (2022), the H100 SXM5 column of its comparison table; its FP32 figure of 67 TFLOP/s is
///   132 x 128 lanes x 2 x 1.98 GHz. The runner measured 65.9 TFLOP/s of FMA on one (README),
///   1.95 GHz in effect.
/// - 4 warp schedulers per SM, each issuing one warp-instruction per clock: the same whitepaper's
///   SM diagram (four partitions, each with a warp scheduler and a dispatch unit of 32 threads
///   per clock).
/// - 128 bytes per clock per SM through L1 and shared memory: the CUDA C++ Programming Guide's
///   32 banks of 4 bytes, each serving one word per clock (one wavefront per clock); 132 x 128 B
///   x 1.98 GHz = 33 TB/s, the whitepaper's aggregate L1 bandwidth.
/// - 3.35 TB/s of HBM3: the NVIDIA H100 datasheet (SXM5).
///
/// Not modelled: the constant cache's misses (a `__constant__` array larger than its few KB is
/// refetched; puzzle 05 runs 8 times slower than predicted), L2, latency with few warps.
pub const H100: Gpu = Gpu {
    name: "NVIDIA H100 SXM5 80GB",
    sms: 132,
    clock_ghz: 1.98,
    issue_per_sm: 4.0,
    l1_wavefronts_per_sm: 1.0,
    dram_bytes_per_s: 3.35e12,
};

/// The kernel's work per block (average of the sampled blocks) and the launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Load {
    pub blocks: u64,
    pub issued_per_block: f64,
    /// Shared wavefronts plus global L1 wavefronts per block.
    pub wavefronts_per_block: f64,
    /// Bytes that must cross DRAM for the whole launch.
    pub dram_bytes: f64,
}

/// The three bounds and which one binds, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub issue: f64,
    pub shared: f64,
    pub memory: f64,
}

impl Prediction {
    pub fn seconds(&self) -> f64 {
        self.issue.max(self.shared).max(self.memory)
    }

    pub fn bound(&self) -> &'static str {
        let t = self.seconds();
        if t == self.issue {
            "issue-bound"
        } else if t == self.shared {
            "shared-bound (L1/shared data path)"
        } else {
            "memory-bound (DRAM)"
        }
    }
}

/// The time `load` takes on `gpu`.
pub fn predict(gpu: &Gpu, load: &Load) -> Prediction {
    let per_sm = load.blocks.div_ceil(u64::from(gpu.sms).max(1)) as f64;
    let clock = gpu.clock_ghz * 1e9;
    Prediction {
        issue: per_sm * load.issued_per_block / (gpu.issue_per_sm * clock),
        shared: per_sm * load.wavefronts_per_block / (gpu.l1_wavefronts_per_sm * clock),
        memory: load.dram_bytes / gpu.dram_bytes_per_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_bound_wins_and_whole_blocks_go_to_each_sm() {
        let load = |blocks| Load {
            blocks,
            issued_per_block: 4.0 * 1.98e9,
            wavefronts_per_block: 0.5 * 1.98e9,
            dram_bytes: 3.35e12 * 0.25,
        };
        let one = predict(&H100, &load(132));
        assert!((one.issue - 1.0).abs() < 1e-9 && (one.shared - 0.5).abs() < 1e-9);
        assert!((one.memory - 0.25).abs() < 1e-9);
        assert_eq!((one.seconds(), one.bound()), (one.issue, "issue-bound"));
        // One block more than the SMs: the busiest SM runs two.
        assert!((predict(&H100, &load(133)).issue - 2.0).abs() < 1e-9);
    }
}
