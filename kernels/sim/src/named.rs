//! Named barriers (`bar.sync a{, b}`, `bar.arrive a, b`, `barrier.sync{.aligned}`,
//! `barrier.arrive{.aligned}`) and the checks of `setmaxnreg`, per the PTX ISA.
//!
//! A block has 16 barriers (ids 0 to 15). A barrier counts threads per warp: a warp's first
//! group to arrive in a phase counts 32, whatever its active lanes (the ISA's rule for
//! `bar`); the phase completes when the count reaches the expected number (the instruction's
//! `b`, a multiple of 32, or every thread of the block without it). Syncing groups park until
//! then; arriving ones go on. Completion releases the waiters at once (they run in the block's
//! next round, `sched`) and orders them after every arrival of the phase (`order`).
//! `bar.sync 0` with no count stays `Op::Bar`, the block-wide `__syncthreads()` with its own
//! `barrier_divergence` sentences (`barrier`). A barrier that can no longer complete is a
//! deadlock (`sched` asks [`Machine::deadlock`] for the sentence).

use crate::fault::{Fault, Located};
use crate::machine::{Machine, Warp};
use ptx::ir::*;

impl Machine<'_> {
    /// `barrier_divergence` at `pc`: "`the instruction` why".
    pub(super) fn misuse(&self, pc: usize, w: &Warp, lane: Option<usize>, why: &str) -> Located {
        let text = &self.prog.texts[self.prog.insts[pc].text as usize];
        let detail = format!("`{text}` {why}");
        self.fault(Fault::BarrierDivergence { detail }, Some(pc), Some(w), lane)
    }

    /// A group `exec` of warp `w` reaches the named barrier at `pc`.
    pub(super) fn named_bar(
        &mut self,
        w: &mut Warp,
        exec: u32,
        pc: usize,
        (id, count, wait): (Src, Option<Src>, bool),
    ) -> Result<(), Located> {
        let cx = w.ctx(exec, self.executed);
        let first = exec.trailing_zeros() as usize;
        let id = cx.get(id)[first];
        let count = count.map(|c| cx.get(c)[first]);
        let threads: u32 = self.block.iter().product();
        let room = threads.div_ceil(32) * 32;
        let bad = if id >= 16 {
            Some(format!(
                "names barrier {id}, but a block has barriers 0 to 15 only"
            ))
        } else {
            match count {
                Some(c) if c == 0 || c % 32 != 0 => Some(format!(
                    "expects {c} threads, but a barrier's thread count must be a nonzero multiple of 32 (the warp size): warps arrive whole"
                )),
                Some(c) if c > u64::from(room) => Some(format!(
                    "expects {c} threads, but the block has only {threads}"
                )),
                _ => None,
            }
        };
        if let Some(why) = bad {
            return Err(self.misuse(pc, w, None, &why));
        }
        let wi = (w.first_tid / 32) as usize;
        // The lanes arriving together pass the barrier as a `__syncwarp()` does: what one did
        // before it is ordered before what another does after (`check`).
        self.chk.syncwarp(w.first_tid, exec);
        let expected = count.map_or(room, |c| c as u32);
        let b = &mut self.sync.bars[id as usize];
        if b.warps >> wi & 1 == 0 {
            b.warps |= 1 << wi;
            if b.first.is_none() {
                (b.first, b.expected) = (Some(pc as u32), expected);
            } else if b.expected != expected {
                b.mismatch = true;
                b.expected = b.expected.max(expected);
            }
            if self.chk.on {
                self.chk.order.release(wi, &mut b.clock);
            }
        }
        if wait {
            b.waiters.push((wi, pc as u32 + 1, exec));
            w.active &= !exec;
        }
        w.pc += 1;
        if b.warps.count_ones() * 32 >= b.expected {
            let done = std::mem::take(b);
            if self.chk.on {
                for &(wj, _, _) in &done.waiters {
                    self.chk.order.acquire(wj, &done.clock);
                }
            }
            self.sync.released.extend(done.waiters);
        }
        Ok(())
    }

    /// `setmaxnreg`: `n` in 24..=256, a multiple of 8, executed by every thread of the warp.
    pub(super) fn setmaxnreg(
        &mut self,
        w: &Warp,
        exec: u32,
        pc: usize,
        n: u64,
    ) -> Result<(), Located> {
        let why = if !(24..=256).contains(&n) || !n.is_multiple_of(8) {
            Some(format!(
                "asks for {n} registers, but the count must be a multiple of 8 from 24 to 256"
            ))
        } else if exec != w.lanes {
            let missing = w.lanes & !exec;
            let ids: Vec<u32> = (0..32)
                .filter(|l| missing >> l & 1 == 1)
                .map(|l| w.first_tid + l)
                .collect();
            Some(format!(
                "is `.sync.aligned`: every thread of the warp must execute it together, but {} did not",
                self.thread_list(&ids)
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(self.misuse(pc, w, None, &why));
        }
        let wi = (w.first_tid / 32) as usize;
        if let Some(m) = self.sync.maxnreg.get_mut(wi) {
            *m = (m.0 + 1, pc as u32);
        }
        Ok(())
    }

    /// The warps of a warpgroup that executed a different number of `setmaxnreg`s (the
    /// instruction is warpgroup-wide), as a diagnostic.
    pub(super) fn setmaxnreg_warpgroups(&self, warps: &[Warp]) -> Option<Located> {
        for (g, four) in self.sync.maxnreg.chunks(4).enumerate() {
            let Some(&(_, pc)) = four.iter().find(|m| m.0 > 0) else {
                continue;
            };
            if four.len() == 4 && four.iter().all(|m| m.0 == four[0].0) {
                continue;
            }
            let text = &self.prog.texts[self.prog.insts[pc as usize].text as usize];
            let counts: Vec<String> = four
                .iter()
                .enumerate()
                .map(|(i, m)| format!("warp {} {} time(s)", 4 * g + i, m.0))
                .collect();
            let detail = format!(
                "`{text}` is warpgroup-wide: all four warps of warpgroup {g} (threads {}-{}) must execute it the same number of times, but {}",
                128 * g,
                128 * g + 127,
                counts.join(", ")
            );
            let w = warps.get(4 * g);
            return Some(self.fault(
                Fault::BarrierDivergence { detail },
                Some(pc as usize),
                w,
                None,
            ));
        }
        None
    }
}
