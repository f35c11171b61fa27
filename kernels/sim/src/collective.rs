//! The warp collectives (`shfl.sync`, `vote.sync`, `match.sync`, `bar.warp.sync`) wait for every
//! non-exited lane of their member mask, as the GPU's do, before any lane reads another's value.
//!
//! A lane group that executes one parks there (`Warp::at_coll`, with its instruction); the warp
//! runs its other groups, lowest pc first as always. When the parked lanes cover the members
//! still alive, the collective runs once over all of them: where they all wait at one
//! instruction it is a single step over their union; where they came from different branches
//! (an `if` and its `else` each with a `__shfl_sync(0xffffffff, ...)`), each group gives what
//! its own instruction names (`exchange::contribution`) and gets its results from its own
//! instruction and everything given (`exchange::exchange`). Then each group goes on after its
//! instruction. Before this, a group read the registers of member lanes that had not arrived
//! yet: values from before their branch. Lanes of the mask that can no longer arrive (at a
//! `__syncthreads()`, or parked at a different kind of collective) are a `barrier_divergence`.

use crate::exchange::{contribution, exchange, member_mask};
use crate::fault::{Fault, Located};
use crate::lanes::Ctx;
use crate::lanes::WarpRegs;
use crate::machine::{Machine, Warp};
use ptx::ir::*;

/// What a collective is called in a learner's source.
fn name(op: &Op) -> &'static str {
    match op {
        Op::Shfl { .. } => "__shfl_sync()",
        Op::Vote {
            mode: VoteMode::Elect,
            ..
        } => "elect.sync",
        Op::Vote { .. } => "vote (__ballot_sync(), __all_sync(), __any_sync())",
        Op::Match { .. } => "__match_any_sync() / __match_all_sync()",
        Op::Redux { .. } => "__reduce_*_sync() (redux.sync)",
        _ => "__syncwarp()",
    }
}

/// Whether two collectives can meet: the same instruction with the same modifiers.
fn same_kind(a: &Op, b: &Op) -> bool {
    match (a, b) {
        (Op::Shfl { mode: x, .. }, Op::Shfl { mode: y, .. }) => x == y,
        (Op::Vote { mode: x, .. }, Op::Vote { mode: y, .. }) => x == y,
        (
            Op::Match {
                all: x, wide: u, ..
            },
            Op::Match {
                all: y, wide: v, ..
            },
        ) => x == y && u == v,
        (
            Op::Redux {
                op: x, signed: s, ..
            },
            Op::Redux {
                op: y, signed: t, ..
            },
        ) => x == y && s == t,
        (Op::BarWarp { .. }, Op::BarWarp { .. }) => true,
        _ => false,
    }
}

impl Machine<'_> {
    /// The lanes of the collective that `group` (pc, lanes) waits at which must take part.
    fn members(&self, w: &mut Warp, group: (u32, u32)) -> u32 {
        let op = &self.prog.insts[group.0 as usize].op;
        let cx = Ctx {
            w: WarpRegs {
                regs: &mut w.regs,
                preds: &mut w.preds,
            },
            exec: group.1,
            clock: self.executed,
        };
        let mask = member_mask(op, &cx, group.1.trailing_zeros() as usize);
        (mask | group.1) & w.lanes & !w.exited
    }

    /// Runs every parked collective whose members have all arrived; true if one ran.
    pub(super) fn release(&mut self, w: &mut Warp, shared: &mut [u8]) -> Result<bool, Located> {
        let mut ran = false;
        'again: loop {
            for i in 0..w.at_coll.len() {
                let members = self.members(w, w.at_coll[i]);
                let arrived = w
                    .at_coll
                    .iter()
                    .filter(|g| g.1 & members != 0)
                    .fold(0, |m, g| m | g.1);
                if members & !arrived != 0 {
                    continue;
                }
                let groups: Vec<(u32, u32)> = w
                    .at_coll
                    .iter()
                    .copied()
                    .filter(|g| g.1 & members != 0)
                    .collect();
                w.at_coll.retain(|g| g.1 & members == 0);
                self.collective(w, shared, &groups)?;
                w.others
                    .extend(groups.iter().map(|&(pc, lanes)| (pc + 1, lanes)));
                ran = true;
                continue 'again;
            }
            return Ok(ran);
        }
    }

    /// One collective over `groups` (pc, lanes), which together hold all its members.
    fn collective(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        groups: &[(u32, u32)],
    ) -> Result<(), Located> {
        let prog = self.prog;
        let (pc0, _) = groups[0];
        let op0 = &prog.insts[pc0 as usize].op;
        let all = groups.iter().fold(0, |m, g| m | g.1);
        let clock = self.executed;
        if groups.iter().all(|g| g.0 == pc0) {
            let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc0 as usize);
            let regs = WarpRegs {
                regs: &mut w.regs,
                preds: &mut w.preds,
            };
            return crate::step::step(op0, regs, all, &mut sp, clock)
                .map_err(|(f, lane)| self.fault(f, Some(pc0 as usize), Some(w), lane));
        }
        if let Some(&(pc, lanes)) = groups
            .iter()
            .find(|g| !same_kind(op0, &prog.insts[g.0 as usize].op))
        {
            let line = |pc: u32| prog.insts[pc as usize].line;
            let [x, y, z] = self.block_id;
            let ids = |m: u32| {
                (0..32)
                    .filter(move |l| m >> l & 1 == 1)
                    .map(|l| w.first_tid + l)
            };
            let detail = format!(
                "in block ({x},{y},{z}), {} wait at the {} on line {} and {} at the {} on line {}: the threads of a warp collective's mask must all reach the same kind of collective",
                self.thread_list(&ids(groups[0].1).collect::<Vec<_>>()),
                name(op0),
                line(pc0),
                self.thread_list(&ids(lanes).collect::<Vec<_>>()),
                name(&prog.insts[pc as usize].op),
                line(pc)
            );
            let lane = lanes.trailing_zeros() as usize;
            return Err(self.fault(
                Fault::BarrierDivergence { detail },
                Some(pc as usize),
                Some(w),
                Some(lane),
            ));
        }
        // From different instructions: everything given first, then each group's results.
        let mut values = [0u64; 32];
        let mut preds = 0u32;
        for &(pc, lanes) in groups {
            let cx = Ctx {
                w: WarpRegs {
                    regs: &mut w.regs,
                    preds: &mut w.preds,
                },
                exec: lanes,
                clock,
            };
            let (v, p) = contribution(&prog.insts[pc as usize].op, &cx);
            for l in (0..32).filter(|l| lanes >> l & 1 == 1) {
                values[l] = v[l];
            }
            preds |= p;
        }
        for &(pc, lanes) in groups {
            let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc as usize);
            let mut cx = Ctx {
                w: WarpRegs {
                    regs: &mut w.regs,
                    preds: &mut w.preds,
                },
                exec: lanes,
                clock,
            };
            exchange(
                &prog.insts[pc as usize].op,
                &mut cx,
                &mut sp,
                &values,
                preds,
                all,
            );
        }
        Ok(())
    }

    /// The `barrier_divergence` of a block in which a warp's lanes wait at a collective for
    /// member lanes that can no longer arrive, if one does. Lanes that wait on an `mbarrier` or
    /// at a named barrier may still come (one lane waits for a phase, then meets the others at
    /// a `__syncwarp()`); if they never do, the block ends as a deadlock instead.
    pub(super) fn stuck_collective(&self, warps: &mut [Warp]) -> Option<Located> {
        let (wi, group, missing) = (0..warps.len()).find_map(|wi| {
            let waiting = self.sync.waiting_lanes(wi);
            (0..warps[wi].at_coll.len()).find_map(|gi| {
                let group = warps[wi].at_coll[gi];
                let members = self.members(&mut warps[wi], group);
                let arrived = warps[wi].at_coll.iter().fold(0, |m, g| m | g.1);
                let missing = members & !arrived;
                (missing == 0 || missing & !waiting != 0).then_some((wi, group, missing))
            })
        })?;
        let w = &warps[wi];
        let ids = |m: u32| -> Vec<u32> {
            (0..32)
                .filter(|l| m >> l & 1 == 1)
                .map(|l| w.first_tid + l)
                .collect()
        };
        let at_bar = w.at_bar.iter().fold(0, |m, g| m | g.1);
        let prog = self.prog;
        let [x, y, z] = self.block_id;
        let detail = format!(
            "in block ({x},{y},{z}), {} wait at the {} on line {} for {} of its mask, which {}; every thread of a warp collective's mask must reach it",
            self.thread_list(&ids(group.1)),
            name(&prog.insts[group.0 as usize].op),
            prog.insts[group.0 as usize].line,
            self.thread_list(&ids(missing)),
            if missing != 0 && missing & at_bar == missing {
                "wait at a __syncthreads() instead"
            } else {
                "never reach it"
            }
        );
        Some(self.fault(
            Fault::BarrierDivergence { detail },
            Some(group.0 as usize),
            Some(w),
            Some(group.1.trailing_zeros() as usize),
        ))
    }
}
