//! The machine's state, as plain data: a launch in progress ([`Machine`]: the program, memory,
//! the block being run, the checks, the block's synchronization objects) and its warps
//! ([`Warp`]: lane groups, registers, predicates, local memory, and what each lane has in
//! flight: `cp.async` copies, `wgmma` operations, calls). The instruction families (`step`,
//! `copy`, `bulk`, `mbarrier`, `named`, `call`, `wgmma`, ...) read and write it; the executor
//! (`exec`) that dispatches to them sits above them all. Nothing here imports a family or the
//! executor.

use crate::check::Checks;
use crate::fault::{Fault, Located};
use crate::lanes::{Ctx, WarpRegs};
use crate::memory::{MemFault, Memory, Spaces, window_base};
use crate::sync::BlockSync;
use ptx::ir::*;

/// A warp: its lane groups, registers, predicates and local memory (plain data).
pub(super) struct Warp {
    pub pc: u32,
    pub active: u32,
    pub others: Vec<(u32, u32)>,
    pub at_bar: Vec<(u32, u32)>,
    /// Groups (pc, lanes) waiting at a warp collective for the rest of its members (`collective`).
    pub at_coll: Vec<(u32, u32)>,
    pub exited: u32,
    /// The instruction at which each lane exited.
    pub exit_pc: [u32; 32],
    /// The forward branch each lane took last (`u32::MAX`: none): where a thread that never
    /// reached a barrier turned away from it.
    pub left_pc: [u32; 32],
    pub lanes: u32,
    pub first_tid: u32,
    pub regs: Vec<u64>,
    pub preds: Vec<u32>,
    pub local: Vec<u8>,
    /// `cp.async` copies not landed yet, and each lane's open group (commits so far).
    pub copies: Vec<CopyPending>,
    pub groups: [u32; 32],
    /// `wgmma.mma_async` ops in flight and the warp's open wgmma group (commits so far).
    pub wgmma: Vec<WgmmaPending>,
    pub wg_open: u32,
    /// Each lane's calls in progress (empty until the warp's first `call`, see `call`).
    pub frames: Vec<Vec<Frame>>,
}

/// One launch in progress.
pub(super) struct Machine<'p> {
    pub prog: &'p Program,
    pub mem: Memory,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: usize,
    pub budget: u64,
    /// What `%nsmid` reads (`SimOptions::sms`).
    pub sms: u32,
    pub executed: u64,
    pub block_id: [u32; 3],
    pub chk: Checks,
    /// The run's output so far: what `printf` printed.
    pub out: spec::job::RunOutput,
    /// The observer attached to the launch, if any (`observe`).
    pub obs: Option<&'p mut dyn crate::observe::Observer>,
    /// The instruction being executed, for an `internal_error` should the simulator panic.
    pub at: &'p std::cell::Cell<Option<usize>>,
    /// The block's named barriers and `mbarrier`s (`named`, `mbarrier`).
    pub sync: BlockSync,
}

impl Machine<'_> {
    pub(super) fn thread_of(&self, linear: u32) -> [u32; 3] {
        let [bx, by, _] = self.block;
        [linear % bx, (linear / bx) % by, linear / (bx * by)]
    }

    /// A copy's access that failed (`write`: on its store side) for lane `l` of `w` at `pc`: the
    /// bulk, tensor and `cp.async` copies' `out_of_bounds`.
    pub(super) fn copy_fault(
        &self,
        (mem, write): (MemFault, bool),
        pc: usize,
        w: &Warp,
        l: usize,
    ) -> Located {
        self.fault(
            Fault::OutOfBounds { write, mem },
            Some(pc),
            Some(w),
            Some(l),
        )
    }

    pub(super) fn fault(
        &self,
        fault: Fault,
        inst: Option<usize>,
        w: Option<&Warp>,
        lane: Option<usize>,
    ) -> Located {
        let thread = match (w, lane) {
            (Some(w), Some(l)) => Some(self.thread_of(w.first_tid + l as u32)),
            (Some(w), None) => {
                let l = if w.active != 0 { w.active } else { w.lanes }
                    .trailing_zeros()
                    .min(31);
                Some(self.thread_of(w.first_tid + l))
            }
            _ => None,
        };
        Located {
            fault,
            inst,
            block: self.block_id,
            thread,
        }
    }
}

impl Machine<'_> {
    /// Every state space as the warp whose first thread is `tid0` sees it at instruction `pc`.
    pub(super) fn spaces<'s>(
        &'s mut self,
        shared: &'s mut [u8],
        local: &'s mut [u8],
        tid0: u32,
        pc: usize,
    ) -> Spaces<'s> {
        let watch = self.chk.on || self.obs.is_some();
        Spaces {
            prog: self.prog,
            mem: &mut self.mem,
            shared,
            local,
            local_bytes: self.prog.local_bytes as usize,
            chk: &mut self.chk,
            watch,
            obs: match &mut self.obs {
                Some(o) => Some(&mut **o),
                None => None,
            },
            unobserved: false,
            tid0,
            inst: pc as u32,
        }
    }
}

impl Warp {
    /// The warp's registers as a [`Ctx`] over the lanes in `exec`.
    pub(super) fn ctx(&mut self, exec: u32, clock: u64) -> Ctx<'_> {
        Ctx {
            w: WarpRegs {
                regs: &mut self.regs,
                preds: &mut self.preds,
            },
            exec,
            clock,
        }
    }
}

/// Makes the lowest-pc group current, merging groups at the same pc. False if none can run.
pub(super) fn resched(w: &mut Warp) -> bool {
    if w.active != 0 {
        if w.others.iter().all(|g| g.0 > w.pc) {
            return true;
        }
        w.others.push((w.pc, w.active));
    }
    let Some(min) = w.others.iter().map(|g| g.0).min() else {
        w.active = 0;
        return false;
    };
    let mut mask = 0;
    w.others.retain(|g| {
        if g.0 == min {
            mask |= g.1;
            false
        } else {
            true
        }
    });
    w.pc = min;
    w.active = mask;
    true
}

/// The generic address of `addr` in `space` (`cvta`).
pub(super) fn to_generic(space: Space, a: u64) -> u64 {
    a.wrapping_add(window_base(space))
}

/// One copy in flight for one lane.
pub struct CopyPending {
    pub lane: u8,
    pub group: u32,
    /// The `cp.async` instruction (for the checks and the learner's line).
    pub pc: u32,
    /// The destination, a shared-space address.
    pub dst: u64,
    pub bytes: [u8; 16],
    pub size: u8,
}

/// One `mma_async` in flight for one warp.
pub struct WgmmaPending {
    pub group: u32,
    pub pc: u32,
    pub a_desc: u64,
    pub b_desc: u64,
    pub scale_d: bool,
}

/// One lane's saved state of a call in progress.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    pub func: u32,
    pub back: u32,
    pub ret_to: Option<u64>,
    pub regs: Vec<u64>,
    pub preds: Vec<bool>,
    pub local: Vec<u8>,
}
