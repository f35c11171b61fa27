//! How many blocks of a kernel one SM holds at once (occupancy), from the registers a thread
//! takes (as `ptxas` allotted them: the runner reads them from the kernel's CUBIN), the block's
//! shared memory and its threads, and which of these limits it; `runner profile` prints it and
//! `model` turns the warps it leaves each scheduler into a latency bound.
//!
//! The limits of compute capability 9.0 (the CUDA C++ Programming Guide's table of technical
//! specifications per compute capability, and its occupancy calculator's allocation rules):
//! 32 blocks, 64 warps and 65,536 32-bit registers per SM; registers are allotted per warp in
//! units of 256 (a thread's count rounded up to a multiple of 8); 228 KB of shared memory per
//! SM, of which each block takes 1 KB more than it asks for (reserved for the system).

/// One SM's limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmLimits {
    pub blocks: u32,
    pub warps: u32,
    pub registers: u32,
    /// Registers are allotted to a warp in units of this many.
    pub register_unit: u32,
    pub shared_bytes: u32,
    /// Shared memory each block takes beyond its own.
    pub shared_reserved: u32,
}

/// Blocks resident per SM and what limits them.
#[derive(Clone, Debug, PartialEq)]
pub struct Occupancy {
    pub blocks: u32,
    pub warps_per_block: u32,
    /// The limits that allow no more blocks than `blocks`: "registers", "shared memory",
    /// "warps", "blocks".
    pub limited_by: Vec<&'static str>,
}

impl Occupancy {
    pub fn warps(&self) -> u32 {
        self.blocks * self.warps_per_block
    }
}

/// The occupancy of a block of `threads` threads, `registers` registers a thread and
/// `shared` bytes of shared memory (static and dynamic) on an SM of `sm`'s limits.
pub fn occupancy(sm: &SmLimits, threads: u32, registers: u32, shared: u32) -> Occupancy {
    let warps_per_block = threads.div_ceil(32).max(1);
    let per_warp = (registers.max(1) * 32).div_ceil(sm.register_unit) * sm.register_unit;
    let by_registers = sm.registers / per_warp / warps_per_block;
    let by_shared = sm.shared_bytes / (shared + sm.shared_reserved);
    let by_warps = sm.warps / warps_per_block;
    let limits = [
        ("registers", by_registers),
        ("shared memory", by_shared),
        ("warps", by_warps),
        ("blocks", sm.blocks),
    ];
    let blocks = limits.iter().map(|l| l.1).min().unwrap_or(0);
    Occupancy {
        blocks,
        warps_per_block,
        limited_by: (limits.iter().filter(|l| l.1 == blocks))
            .map(|l| l.0)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The kernels of issue 36's corpora as ncu saw them on an H100 (bench/profile_corpus.json):
    // its `launch__shared_mem_per_block` counts the reserved 1 KB, so the shared bytes here are
    // 1,024 fewer. ncu's shared-memory limit is that of the carve-out the driver chose for the
    // launch, never below the others; the one here is the whole 228 KB's.
    #[test]
    fn registers_limit_the_learners_wmma_kernel_to_7_blocks() {
        // 128 threads, 72 registers, 20,480 bytes of shared memory.
        let o = occupancy(&crate::H100.sm, 128, 72, 20_480);
        assert_eq!((o.blocks, o.warps()), (7, 28));
        assert_eq!(o.limited_by, vec!["registers"]);
    }

    #[test]
    fn registers_and_warps_allow_8_blocks_of_a_naive_kernel() {
        // 256 threads and 31 registers (allotted as 32): 8 blocks by registers and by warps.
        let o = occupancy(&crate::H100.sm, 256, 31, 0);
        assert_eq!((o.blocks, o.warps()), (8, 64));
        assert_eq!(o.limited_by, vec!["registers", "warps"]);
    }

    #[test]
    fn puzzle_11s_solution_holds_two_blocks_of_its_221_registers() {
        let o = occupancy(&crate::H100.sm, 128, 221, 76_288);
        assert_eq!((o.blocks, o.warps()), (2, 8));
        assert_eq!(o.limited_by, vec!["registers"]);
        // The learner's staged split-tf32 kernel: 44 registers allow 10, its shared memory 6.
        let o = occupancy(&crate::H100.sm, 128, 44, 37_360);
        assert_eq!((o.blocks, o.limited_by), (6, vec!["shared memory"]));
    }
}
