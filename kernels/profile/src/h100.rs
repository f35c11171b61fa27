//! The GPU `runner profile` models (`model`): `Gpu`, one GPU's constants, and the one it knows,
//! an NVIDIA H100 SXM5, each constant with where it comes from (a document, a microbenchmark
//! paper, or a measurement on the device recorded in `bench/`), and what the model leaves out
//! (`bench/PROFILE.md` has the arithmetic against the device's numbers).

use crate::occupancy::SmLimits;

/// One GPU's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gpu {
    pub name: &'static str,
    pub sms: u32,
    /// Boost clock, GHz.
    pub clock_ghz: f64,
    /// The SM clock while the tensor cores work, GHz: the issue, shared and constant bounds of a
    /// kernel that uses them count their clocks at this one.
    pub tensor_clock_ghz: f64,
    /// Warp-instructions issued per SM per clock.
    pub issue_per_sm: f64,
    /// Clocks between a warp's instruction and one that depends on it, in the arithmetic pipes.
    pub dependent_issue_cycles: f64,
    /// Clocks from a load's issue to its result: from shared memory, a global load that hits
    /// L1, one that misses it and hits L2, one that goes to DRAM (`critical`).
    pub shared_load_cycles: f64,
    pub l1_hit_cycles: f64,
    pub l2_hit_cycles: f64,
    pub dram_cycles: f64,
    /// Wavefronts (128 bytes) of the L1/shared data path per SM per clock.
    pub l1_wavefronts_per_sm: f64,
    /// Distinct `__constant__` addresses the constant cache serves per SM per clock.
    pub const_addresses_per_sm: f64,
    /// Bytes of the SM's first-level constant cache (lines of `constcache::LINE_BYTES`).
    pub const_cache_bytes: f64,
    /// Clocks of the SM's constant path per constant request that misses that cache, beyond the
    /// clock of each address.
    pub const_miss_cycles: f64,
    /// DRAM bandwidth, bytes (read plus written) per second.
    pub dram_bytes_per_s: f64,
    /// Tensor-core products per SM per clock, in tf32 FLOP (multiply-adds x 2; 16-bit operands
    /// run at twice the rate), through `mma.sync` and through `wgmma`.
    pub mma_sync_flop_per_sm: f64,
    pub wgmma_flop_per_sm: f64,
    /// What one SM holds at once (`occupancy`).
    pub sm: SmLimits,
}

impl Gpu {
    /// The latencies a warp's critical path is followed with (`critical`).
    pub fn latencies(&self) -> crate::critical::Latencies {
        crate::critical::Latencies {
            arith: self.dependent_issue_cycles,
            shared: self.shared_load_cycles,
            l1_hit: self.l1_hit_cycles,
            l2_hit: self.l2_hit_cycles,
            dram: self.dram_cycles,
        }
    }
}

/// NVIDIA H100 SXM5 80GB.
/// - 132 SMs and a boost clock of 1,980 MHz: NVIDIA H100 Tensor Core GPU Architecture whitepaper
///   (2022), the H100 SXM5 column of its comparison table; its FP32 figure of 67 TFLOP/s is
///   132 x 128 lanes x 2 x 1.98 GHz. The runner measured 65.9 TFLOP/s of FMA on one (README),
///   1.95 GHz in effect.
/// - 1.81 GHz while the tensor cores work: `ncu`'s `gpc__cycles_elapsed.avg.per_second` (the
///   clocks left alone) for the nine kernels of issue 36's corpora that use them, 1.79 to 1.84 GHz,
///   against 1.95 to 1.99 for the other sixteen, on an NVIDIA H100 80GB HBM3
///   (`bench/profile_corpus.json`). The tensor rates below were measured as times, at whatever
///   clock the chip ran, so the tensor bound keeps them as they are.
/// - 4 warp schedulers per SM, each issuing one warp-instruction per clock: the same whitepaper's
///   SM diagram (four partitions, each with a warp scheduler and a dispatch unit of 32 threads
///   per clock).
/// - 4 clocks from an arithmetic instruction to one that uses its result: the dependent-issue
///   latency of the FP32 and integer pipes that microbenchmarks measured on Volta (Jia et al.,
///   "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018: 4 cycles for
///   FFMA and IADD), taken as the same on Hopper. On the device (issue 36's run, ncu):
///   every kernel of the corpora waits about 2 clocks per instruction on such fixed-latency
///   dependencies (the `wait` stall), and puzzle 11's solution, with 1.8 warps per scheduler,
///   issues in 35% of the cycles.
/// - Load latencies, for each warp's critical path (`critical`): 30 clocks from shared memory,
///   35 for a global load that hits L1, 260 for one that hits L2, 480 for one from DRAM. Round
///   figures of the range the pointer-chasing microbenchmarks report for Hopper (Luo et al.,
///   "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", 2024; the figures were
///   taken as recalled, not re-read in that paper's tables), not measured on this device and not
///   fitted: they were set before the corpora were compared. Volta's, measured by Jia et al.
///   (2018, above), are lower (19 shared, 28 L1, 193 L2); with those, two of the three kernels
///   the term brings within 1.5x stay out (bench/PROFILE.md, "a warp's critical path").
/// - 128 bytes per clock per SM through L1 and shared memory: the CUDA C++ Programming Guide's
///   32 banks of 4 bytes, each serving one word per clock (one wavefront per clock); 132 x 128 B
///   x 1.98 GHz = 33 TB/s, the whitepaper's aggregate L1 bandwidth.
/// - One wavefront covers up to 4 cache lines of a global request: the L1TEX tag stage resolves
///   4 sets x 4 sectors per cycle (NVIDIA's description of the L1TEX pipeline on its developer
///   forum, for GV100 and later).
/// - Constant memory: the CUDA C++ Programming Guide (the constant memory section of its
///   performance guidelines): a request is split into as many requests as it has distinct
///   addresses, throughput falling by that factor. One address per clock per SM is this
///   model's assumption.
/// - A first-level constant cache of 2 KB a SM in 64-byte lines: Jia et al. (2018, above)
///   measured these for Volta's constant L1 cache (a 64 KB L1.5 constant cache behind it), taken
///   as the same on Hopper. 14 clocks of the SM's constant path per PTX constant request that
///   misses it, on top of its address's one: derived from puzzle 05's solution on an NVIDIA
///   H100 80GB HBM3 (`bench/profile_corpus.json`): 10.89M clocks per SM (ncu's
///   `sm__cycles_elapsed.avg`) over the 722k constant requests its busiest SM issues, all
///   missing (15.1 each); `ptxas` pairs them into 8-byte `ULDC.64` loads, so 30 clocks per SASS
///   load, as ncu's `imc_miss` stall says (29.0 and 30.7 cycles per instruction issued for it and
///   its bulk-tile variant). A constant fitted to one kernel, not measured apart. Checked on the
///   one other kernel of the corpora whose constants overflow the cache, puzzle 06's solution:
///   24 warps a SM, fewer than the cache's 32 lines, no misses predicted, none seen (`imc_miss`
///   0.15).
/// - 2.822 TB/s: the device-to-device copy (bytes read plus written) that `runner bench`
///   measured on an NVIDIA H100 80GB HBM3 (README); the datasheet's HBM3 peak is 3.35 TB/s.
/// - Tensor cores, measured on an NVIDIA H100 80GB HBM3: `mma.sync.m16n8k8` tf32 takes 7.8 clocks
///   per instruction per sub-partition once two warps issue it (`lab/p12/mma_rate.cu`,
///   `lab/p12/README.md`), so 4 x 2,048 / 7.8 = 1,050 FLOP per SM per clock (274 TFLOP/s);
///   `m16n8k16` bf16 the same clocks for twice the work. `wgmma` tf32: a second set of m64n256k8
///   products added to puzzle 11's kernel ran at 480 TFLOP/s (`lab/igemm/README.md`,
///   round 11), 480e12 / (132 x 1.98e9) = 1,837 FLOP per SM per clock, 90% of the whitepaper's
///   dense TF32 figure at this clock.
///
/// Not modelled (bench/PROFILE.md has the arithmetic against the device's numbers):
/// - Which constant requests miss, beyond the all-or-nothing of `constcache::misses`.
/// - Queueing beyond the closed network of `queueing` (a scheduler's warps, a quarter of the
///   SM's L1 data path, constant path and DRAM share, and the rest of each warp's critical path
///   as a delay, solved by mean value analysis): L2's queues, the tensor pipes, and the time a
///   block holds its SM slot until its last warp ends. Puzzle 09's naive kernel at 3x3 (16
///   warps a scheduler, a path of 2k clocks) is predicted at 81 us against 113 us measured.
/// - Which lines hit L1 beyond a warp's own reuse, and which misses hit L2: the critical path
///   takes a line another warp of the block fetched as a miss, and mixes the L2 and DRAM
///   latencies by the share of the misses' bytes the DRAM bound must read.
/// - L2, and the instructions `ptxas` adds or removes, but for 32-bit integer division and
///   remainder by a register (`mix::sass_extra`: issue 36's learners' implicit GEMMs).
/// - How well the schedulers fill their slots with 4 warps or more each (issue 36's learners'
///   puzzle 11 kernels: 65 to 81% with 6 to 15 warps per scheduler), and the products of a
///   lone warpgroup (puzzle 11's Hopper ping-pong, about 55% of the `wgmma` rate).
pub const H100: Gpu = Gpu {
    name: "NVIDIA H100 SXM5 80GB",
    sms: 132,
    clock_ghz: 1.98,
    tensor_clock_ghz: 1.81,
    issue_per_sm: 4.0,
    dependent_issue_cycles: 4.0,
    shared_load_cycles: 30.0,
    l1_hit_cycles: 35.0,
    l2_hit_cycles: 260.0,
    dram_cycles: 480.0,
    l1_wavefronts_per_sm: 1.0,
    const_addresses_per_sm: 1.0,
    const_cache_bytes: 2048.0,
    const_miss_cycles: 14.0,
    dram_bytes_per_s: 2.822e12,
    mma_sync_flop_per_sm: 4.0 * 2048.0 / 7.8,
    wgmma_flop_per_sm: 480e12 / (132.0 * 1.98e9),
    // Compute capability 9.0's limits (`occupancy`).
    sm: SmLimits {
        blocks: 32,
        warps: 64,
        registers: 65_536,
        register_unit: 256,
        shared_bytes: 228 * 1024,
        shared_reserved: 1024,
    },
};
