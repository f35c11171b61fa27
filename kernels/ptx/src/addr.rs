//! The simulator's address map: each state space and each global buffer is a region of the
//! 64-bit generic address space, told apart by the bits above `REGION_SHIFT`. The decoder
//! places module-scope globals by it; the simulator's memory resolves addresses by it.

use crate::ir::Space;

pub const REGION_SHIFT: u32 = 40;
pub const SHARED_REGION: u64 = 0xF00;
pub const CONST_REGION: u64 = 0xF01;
pub const LOCAL_REGION: u64 = 0xF02;
pub const PARAM_REGION: u64 = 0xF03;

/// The generic (and global) address of byte 0 of global region `r`.
pub fn global_base(r: usize) -> u64 {
    ((r as u64) << REGION_SHIFT) | (1 << (REGION_SHIFT - 1))
}

/// The generic address of offset 0 of a windowed space.
pub fn window_base(space: Space) -> u64 {
    let r = match space {
        Space::Shared => SHARED_REGION,
        Space::Const => CONST_REGION,
        Space::Local => LOCAL_REGION,
        Space::Param => PARAM_REGION,
        Space::Global | Space::Generic => 0,
    };
    r << REGION_SHIFT
}
