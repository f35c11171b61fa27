//! A block's run: its warps in turn until every thread has exited, and between rounds the
//! synchronization that lets parked groups go on.
//!
//! A round runs every warp until none of its groups can run. Then, in this order: groups a named
//! barrier released go on; a `__syncthreads()` that every thread of the block waits at (none
//! exited, none waiting elsewhere) releases them all, and one that only some threads reach is
//! `barrier_divergence` (`barrier`); groups whose `mbarrier` wait failed (`mbarrier`) go on at
//! the instruction after it, as a kernel's retry loop would, unless nothing in the block has
//! changed since they last did (the same registers, shared memory and `mbarrier`s: the
//! simulator is deterministic, so they would fail again forever); any group still waiting then
//! is a deadlock (`barrier::deadlock`), reported instead of spinning until the budget runs out.

use crate::fault::{Fault, Located};
use crate::machine::{Machine, Warp, resched};
use crate::sync::BlockSync;
use ptx::ir::Special;
use std::hash::{Hash, Hasher};

impl Machine<'_> {
    pub(super) fn run_block(&mut self) -> Result<(), Located> {
        let threads = self.block.iter().product::<u32>();
        let mut warps: Vec<Warp> = (0..threads.div_ceil(32))
            .map(|i| self.new_warp(i, threads))
            .collect();
        self.sync = BlockSync::new(warps.len());
        let mut shared = vec![0u8; self.shared_bytes];
        let [bx, by, _] = self.block_id;
        let linear = bx + self.grid[0] * (by + self.grid[1] * self.block_id[2]);
        let (block, shared_bytes) = (self.block_id, self.shared_bytes);
        self.seen(|o| o.begin_block(block, linear, shared_bytes));
        loop {
            for w in warps.iter_mut() {
                if w.active != 0 || !w.others.is_empty() {
                    self.run_warp(w, &mut shared)?;
                }
            }
            if let Some(stuck) = self.stuck_collective(&mut warps) {
                return Err(stuck);
            }
            if !self.sync.released.is_empty() {
                for (wi, pc, m) in std::mem::take(&mut self.sync.released) {
                    warps[wi].others.push((pc, m));
                    resched(&mut warps[wi]);
                }
                continue;
            }
            let parked: Vec<(usize, u32, u32)> = warps
                .iter()
                .enumerate()
                .flat_map(|(i, w)| w.at_bar.iter().map(move |&(pc, m)| (i, pc, m)))
                .collect();
            if let Some(&(w0, pc0, m0)) = parked.first()
                && !self.sync.waiting()
            {
                let exited = warps.iter().any(|w| w.exited != 0);
                if exited || parked.iter().any(|g| g.1 != pc0) {
                    let detail = self.divergence(&warps, &parked);
                    return Err(self.fault(
                        Fault::BarrierDivergence { detail },
                        Some(pc0 as usize),
                        Some(&warps[w0]),
                        Some(m0.trailing_zeros() as usize),
                    ));
                }
                for w in warps.iter_mut() {
                    let mask = w.at_bar.drain(..).fold(0, |a, g| a | g.1);
                    if mask != 0 {
                        w.others.push((pc0 + 1, mask));
                        resched(w);
                    }
                }
                self.seen(|o| o.barrier());
                continue;
            }
            if !self.sync.spinners.is_empty() {
                let now = self.fingerprint(&warps, &shared);
                if self.sync.last_wake != Some(now) {
                    self.sync.last_wake = Some(now);
                    for s in std::mem::take(&mut self.sync.spinners) {
                        warps[s.warp].others.push((s.pc + 1, s.lanes));
                        resched(&mut warps[s.warp]);
                    }
                    continue;
                }
            }
            if self.sync.waiting() || !parked.is_empty() {
                return Err(self.deadlock(&warps, &parked));
            }
            if let Some(e) = self.setmaxnreg_warpgroups(&warps) {
                return Err(e);
            }
            self.seen(|o| o.end_block());
            return Ok(());
        }
    }

    pub(super) fn new_warp(&self, index: u32, threads: u32) -> Warp {
        let first = index * 32;
        let n = (threads - first).min(32);
        let lanes = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        let p = self.prog;
        let mut regs = vec![0u64; p.nregs as usize * 32];
        for &(slot, sp) in &p.specials {
            for l in 0..32u32 {
                let t = self.thread_of(first + l);
                let v = match sp {
                    Special::Tid(d) => u64::from(t[d]),
                    Special::Ntid(d) => u64::from(self.block[d]),
                    Special::Ctaid(d) => u64::from(self.block_id[d]),
                    Special::Nctaid(d) => u64::from(self.grid[d]),
                    Special::Laneid => u64::from(l),
                    Special::Warpid => u64::from(index),
                    Special::Nwarpid => u64::from(threads.div_ceil(32)),
                    // One simulated SM runs the blocks one after another; the SMs the kernel
                    // is told of are the options' (1 unless a profile asks for a GPU's).
                    Special::Smid => 0,
                    Special::Nsmid => u64::from(self.sms),
                    Special::LanemaskLt => u64::from((1u32 << l) - 1),
                    Special::LanemaskLe => u64::from(((1u64 << (l + 1)) - 1) as u32),
                    Special::LanemaskEq => u64::from(1u32 << l),
                    Special::LanemaskGe => u64::from(!((1u32 << l) - 1)),
                    Special::LanemaskGt => u64::from(!(((1u64 << (l + 1)) - 1) as u32)),
                };
                regs[slot as usize * 32 + l as usize] = v;
            }
        }
        Warp {
            pc: p.start,
            active: lanes,
            others: Vec::new(),
            at_bar: Vec::new(),
            at_coll: Vec::new(),
            exited: 0,
            exit_pc: [0; 32],
            left_pc: [u32::MAX; 32],
            lanes,
            first_tid: first,
            regs,
            preds: vec![0; p.npreds as usize],
            local: vec![0; p.local_bytes as usize * 32],
            copies: Vec::new(),
            groups: [0; 32],
            wgmma: Vec::new(),
            wg_open: 0,
            frames: Vec::new(),
        }
    }

    /// What the block's state is made of, hashed: every warp's groups, registers and
    /// predicates, shared memory and the `mbarrier`s.
    fn fingerprint(&self, warps: &[Warp], shared: &[u8]) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        for w in warps {
            (w.pc, w.active, &w.others, &w.at_bar, w.exited).hash(&mut h);
            (&w.regs, &w.preds).hash(&mut h);
        }
        shared.hash(&mut h);
        self.sync.mbars.generation().hash(&mut h);
        for s in &self.sync.spinners {
            (s.warp, s.pc, s.lanes).hash(&mut h);
        }
        h.finish()
    }
}
