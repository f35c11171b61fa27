//! Execute a decoded [`Program`]: blocks one after another, each block's warps in turn, each
//! warp's active lanes together per instruction.
//!
//! Divergence: a warp holds lane groups, each a (pc, lane mask). The group with the lowest pc
//! runs; groups that reach the same pc merge. Structured code therefore reconverges after an
//! `if` and at a loop's exit, and the order is fixed, so runs are deterministic. A group that
//! reaches `bar.sync` parks (named barriers and `mbarrier` waits: `named`, `mbarrier`; the
//! block's rounds and releases: `sched`); when no group of any warp in the block can run, the block's parked
//! groups must all wait at the same barrier and no thread of the block may have exited; they are
//! then released together. Otherwise the launch stops with `barrier_divergence`, naming the
//! threads that arrived and those that did not, instead of hanging (a GPU of compute capability
//! 7.0 and later counts exited threads as arrived, but the CUDA guide leaves it undefined, and a
//! barrier only part of the block passes through is always a bug in these puzzles). A warp
//! collective (`shfl.sync`, `vote.sync`, `match.sync`, `bar.warp.sync`) parks its group until
//! every live lane of its mask has arrived, then runs over all of them (`collective`). Every
//! thread-instruction counts against the budget; exceeding it stops the launch with `timeout`.

use crate::fault::{Fault, Located};
use crate::lanes::WarpRegs;
use crate::machine::{Machine, Warp, resched};
use ptx::ir::*;

impl Machine<'_> {
    /// Runs every block; the first fault ends the launch.
    pub fn run(&mut self) -> Result<(), Located> {
        let [gx, gy, gz] = self.grid;
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    if let Some(o) = self.obs.as_deref_mut()
                        && !o.runs_block([x, y, z])
                    {
                        continue;
                    }
                    self.block_id = [x, y, z];
                    self.run_block()?;
                }
            }
        }
        Ok(())
    }

    /// Runs the warp until none of its groups can run (all exited or parked at a barrier).
    pub(super) fn run_warp(&mut self, w: &mut Warp, shared: &mut [u8]) -> Result<(), Located> {
        let prog = self.prog;
        loop {
            if w.active == 0 && !resched(w) {
                // Lanes that exited may have been all a parked collective waited for.
                if !w.at_coll.is_empty() && self.release(w, shared)? {
                    continue;
                }
                return Ok(());
            }
            let pc = w.pc as usize;
            self.at.set(Some(pc));
            let Some(inst) = prog.insts.get(pc) else {
                self.ran_off_the_end(w, shared)?;
                continue;
            };
            let exec = self.issue(w, shared, pc, inst)?;
            self.execute(w, shared, exec, pc, &inst.op)?;
            if !w.others.is_empty() {
                resched(w);
            }
        }
    }

    /// The active lanes ran past the last instruction: they exit there.
    fn ran_off_the_end(&mut self, w: &mut Warp, shared: &mut [u8]) -> Result<(), Located> {
        let last = self.prog.insts.len().saturating_sub(1) as u32;
        for l in 0..32 {
            if w.active >> l & 1 == 1 {
                w.exit_pc[l] = last;
            }
        }
        let lanes = w.active;
        w.exited |= lanes;
        w.active = 0;
        self.land(w, shared, lanes, |_, _| true)
    }

    /// Issues `inst` at `pc` for the active lanes: the lanes its guard lets execute, counted
    /// against the budget and told to the observer, once the `wgmma`s whose registers it names
    /// have retired.
    #[inline(always)]
    fn issue(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        pc: usize,
        inst: &Inst,
    ) -> Result<u32, Located> {
        let exec = match inst.guard {
            None => w.active,
            Some((p, neg)) => w.active & (w.preds[p as usize] ^ if neg { u32::MAX } else { 0 }),
        };
        self.executed += u64::from(exec.count_ones());
        if self.executed > self.budget {
            return Err(self.fault(
                Fault::Timeout {
                    budget: self.budget,
                },
                Some(pc),
                Some(w),
                None,
            ));
        }
        self.issued(w.first_tid / 32, pc, w.active, exec);
        if inst.wgmma_sync && exec != 0 && !w.wgmma.is_empty() {
            // ptxas waits here for the wgmma's whose registers this instruction names.
            self.wgmma_retire(w, shared, |_, _| true)?;
        }
        Ok(exec)
    }

    /// Executes `op` at `pc` for the lanes `exec` of the active group: control flow here, each
    /// family in its module, and every other instruction through `step`.
    #[inline(always)]
    fn execute(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &Op,
    ) -> Result<(), Located> {
        match op {
            Op::Bra { target } => branch(w, exec, *target),
            Op::Exit => {
                for l in 0..32 {
                    if exec >> l & 1 == 1 {
                        w.exit_pc[l] = w.pc;
                    }
                }
                w.exited |= exec;
                w.active &= !exec;
                w.pc += 1;
                self.land(w, shared, exec, |_, _| true)?;
            }
            Op::Bar => {
                if exec != 0 {
                    w.at_bar.push((w.pc, exec));
                }
                w.active &= !exec;
                w.pc += 1;
            }
            Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::Redux { .. }
            | Op::BarWarp { .. } => {
                // Parked until every member has arrived; lanes whose guard is false go on.
                w.active &= !exec;
                w.pc += 1;
                if exec != 0 {
                    w.at_coll.push((pc as u32, exec));
                    self.release(w, shared)?;
                }
            }
            Op::Trap | Op::AssertFail { .. } if exec != 0 => {
                let lane = exec.trailing_zeros() as usize;
                let fault = self.trap(w, shared, pc, lane, op);
                return Err(self.fault(fault, Some(pc), Some(w), Some(lane)));
            }
            Op::Unsupported { why } if exec != 0 => {
                return Err(self.fault(
                    Fault::Unsupported { what: why.clone() },
                    Some(pc),
                    Some(w),
                    None,
                ));
            }
            Op::CpAsyncCommit => {
                self.cp_async_group(w, shared, exec, true, None)?;
                w.pc += 1;
            }
            &Op::CpAsyncWait { keep, commit } => {
                self.cp_async_group(w, shared, exec, commit, Some(keep))?;
                w.pc += 1;
            }
            Op::Ret => self.ret(w, shared, exec, pc)?,
            // The families that move the pc themselves where some lane executes.
            &Op::NamedBar { id, count, wait } if exec != 0 => {
                self.named_bar(w, exec, pc, (id, count, wait))?
            }
            Op::Mbar(op) if exec != 0 => self.mbar(w, shared, exec, pc, op)?,
            Op::Call { func, args, ret } if exec != 0 => {
                self.call(w, exec, pc, *func, args, *ret)?
            }
            Op::NamedBar { .. } | Op::Mbar(_) | Op::Call { .. } => w.pc += 1,
            op => {
                if exec != 0 {
                    self.family(w, shared, exec, pc, op)?;
                }
                w.pc += 1;
            }
        }
        Ok(())
    }

    /// The instructions that go on to the next one: each family in its module, and every other
    /// instruction through `step` (a fault at the learner's line, an ordinary access of an
    /// `mbarrier` object's bytes), with the products and tensor-core work counted for the
    /// budgets.
    #[inline(always)]
    fn family(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &Op,
    ) -> Result<(), Located> {
        match op {
            &Op::SetMaxNreg { n } => return self.setmaxnreg(w, exec, pc, n),
            Op::Printf { fmt, args, ret } => {
                return self.printf(w, shared, exec, pc, [*fmt, *args], *ret);
            }
            Op::CpAsync { .. } => return self.cp_async(w, shared, exec, pc, op),
            Op::Wgmma(op) => return self.wgmma(w, shared, exec, pc, op),
            Op::Bulk(op) => return self.bulk(w, shared, exec, pc, op),
            Op::TensorMap(op) => return self.tensor_map(w, shared, exec, pc, op),
            _ => {}
        }
        let clock = self.executed;
        let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
        if let Err((mut fault, lane)) = crate::step::step(
            op,
            WarpRegs {
                regs: &mut w.regs,
                preds: &mut w.preds,
            },
            exec,
            &mut sp,
            clock,
        ) {
            // A tensor-core collective some lanes missed: say where they went.
            if let Op::Mma(_) = op {
                self.name_missing_lanes(&mut fault, w, exec, pc as u32);
            }
            return Err(self.fault(fault, Some(pc), Some(w), lane));
        }
        if self.chk.mbar.touch.is_some() {
            return Err(self.mbar_touched(w));
        }
        let products = &mut self.chk.budgets.products;
        if products.on {
            if let Some(n) = crate::budget::cuda_core_products(op) {
                products.cuda(pc, exec, n);
            } else if let Some((TensorPipe::MmaSync, _, macs)) = op.tensor_macs() {
                // A `wgmma` is counted where it runs (`wgmma`).
                products.tensor(macs);
            }
        }
        Ok(())
    }
}

/// A branch to `target` by the lanes `exec`: the others fall through as a group of their own,
/// and a forward branch is remembered per lane (where a thread turned away from a barrier).
fn branch(w: &mut Warp, exec: u32, target: u32) {
    let fall = w.active & !exec;
    if exec != 0 && fall != 0 {
        w.others.push((w.pc + 1, fall));
        w.active = exec;
    }
    if exec != 0 && target > w.pc {
        let mut m = exec;
        while m != 0 {
            w.left_pc[m.trailing_zeros() as usize] = w.pc;
            m &= m - 1;
        }
    }
    w.pc = if exec != 0 { target } else { w.pc + 1 };
}
