//! `cp.async.bulk`: the bulk copies of compute capability 9.0 (the TMA unit's one-dimensional
//! form, no tensor map), per the PTX ISA ("Data Movement and Conversion Instructions:
//! cp.async.bulk"):
//!
//! - global to shared, `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst],
//!   [src], size, [mbar]` (`.shared::cta` too): the copy's completion takes `size` bytes off the
//!   transaction count of the mbarrier (`mbarrier`), whose phase then completes once its arrivals
//!   are in as well;
//! - shared to global, `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size`, in the
//!   issuing thread's bulk groups: `cp.async.bulk.commit_group` closes the open group and
//!   `cp.async.bulk.wait_group{.read} n` waits until at most `n` groups are in flight (`.read`:
//!   until they have read their source).
//!
//! A copy moves its bytes when it is issued, as the issuing thread's accesses at its line: the
//! checks see its shared writes (or reads) as that thread's, so a thread of another warp that reads
//! a loaded stage before waiting on its mbarrier races with the copy (the issuing thread's own warp
//! included: its lanes that wait are ordered after the copy, the others are not), and a stored
//! buffer that nobody wrote is an uninitialized read. A load's destination then stays in flight
//! (`inflight`) until a wait on the phase that counts its bytes orders an access after it, so a
//! read after a barrier that no wait preceded is a race too, as is a write into it meanwhile. Its
//! completion releases the issuing warp into the mbarrier's phase, which is what orders the copy
//! before the threads that wait. A store's source stays "being read" until its thread's
//! `wait_group.read` covers its group: a write into it before then (the same thread reusing a
//! staging buffer included) is a race at both lines, and its global destination is being written
//! until a `wait_group` without `.read` covers it: a read of it before then (by its own thread too)
//! is a race (`check_global`). Sizes must be multiples of 16 and both addresses 16-byte aligned; a
//! copy that breaks that is diagnosed at its line. The tensor forms (`.tensor`) are `tensor_map`'s.
//! Not simulated: multicast and the shared-to-shared form (clusters), and `cp.reduce.async.bulk`;
//! `cp.async.bulk.prefetch` is a hint and does nothing.

use crate::check::Acc;
use crate::fault::{Fault, Located};
use crate::machine::{Machine, Warp};
use crate::mbarrier::Misuse;
use ptx::ir::*;

impl Machine<'_> {
    /// One bulk instruction over the lanes `exec` of warp `w`, in lane order.
    pub(super) fn bulk(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &BulkOp,
    ) -> Result<(), Located> {
        let lanes: Vec<usize> = (0..32).filter(|l| exec >> l & 1 == 1).collect();
        let on = self.chk.on;
        let (dst, src, size, mbar, load) = match *op {
            BulkOp::Commit => {
                if on {
                    for &l in &lanes {
                        self.chk.bulk.commit(w.first_tid + l as u32);
                    }
                }
                return Ok(());
            }
            BulkOp::Wait { keep, read } => {
                if on {
                    for &l in &lanes {
                        self.chk.bulk.wait(w.first_tid + l as u32, keep, read);
                    }
                }
                return Ok(());
            }
            BulkOp::Load {
                dst,
                src,
                size,
                mbar,
            } => (dst, src, size, Some(mbar), true),
            BulkOp::Store { dst, src, size } => (dst, src, size, None, false),
            BulkOp::TensorLoad { .. } | BulkOp::TensorStore { .. } => {
                self.chk.bulk.storing = on && matches!(op, BulkOp::TensorStore { .. });
                let done = self.bulk_tensor(w, shared, exec, pc, op);
                self.chk.bulk.storing = false;
                return done;
            }
        };
        let (dsts, srcs, sizes, bars) = {
            let cx = w.ctx(exec, self.executed);
            (
                cx.addrs(dst),
                cx.addrs(src),
                cx.get(size),
                mbar.map(|a| cx.addrs(a)),
            )
        };
        // The global side of a load is read quietly: inputs, not one thread's work.
        let (from, to, acc) = if load {
            (Space::Global, Space::Shared, Acc::Quiet)
        } else {
            (Space::Shared, Space::Global, Acc::Read)
        };
        for &l in &lanes {
            let (d, s, n) = (dsts[l], srcs[l], sizes[l] as u32);
            if n == 0 || n % 16 != 0 || d % 16 != 0 || s % 16 != 0 {
                let at = |space: Space, a: u64| match space {
                    Space::Shared => format!("shared byte {a}"),
                    _ => format!("global address {a:#x}"),
                };
                let text = &self.prog.texts[self.prog.insts[pc].text as usize];
                let detail = format!(
                    "`{text}` copies {n} bytes from {} to {}, but a bulk copy moves a positive multiple of 16 bytes between 16-byte-aligned addresses (on a GPU the launch stops with \"misaligned address\")",
                    at(from, s),
                    at(to, d)
                );
                return Err(self.fault(Fault::Misaligned { detail }, Some(pc), Some(w), Some(l)));
            }
            self.chk.bulk.storing = on && !load;
            let moved = {
                let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
                (0..u64::from(n)).step_by(4).try_for_each(|i| {
                    let v = sp.load_as(from, s + i, 4, l, acc).map_err(|e| (e, false))?;
                    sp.store(to, d + i, 4, v, l).map_err(|e| (e, true))
                })
            };
            self.chk.bulk.storing = false;
            moved.map_err(|e| self.copy_fault(e, pc, w, l))?;
            let mine = if load { d } else { s };
            self.bulk_done(w, shared, pc, l, bars.map(|b| b[l]), (mine, n))?;
        }
        Ok(())
    }

    /// After lane `l`'s copy of `n` bytes to (or from) shared `s`: a load completes on the
    /// mbarrier at `bar`, its destination in flight until a wait on that phase (`inflight`); a
    /// store's source stays being read until its group is waited for.
    pub(super) fn bulk_done(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        pc: usize,
        l: usize,
        bar: Option<u64>,
        (s, n): (u64, u32),
    ) -> Result<(), Located> {
        let on = self.chk.on;
        let wi = (w.first_tid / 32) as usize;
        match bar {
            Some(a) => {
                // The copy's writes are the async proxy's, not its thread's: lanes of the
                // issuing warp that wait for it are ordered after them as other warps are
                // (its lane counts as passing a `__syncwarp()`, which the wait is for them).
                if on {
                    self.chk.syncwarp(w.first_tid, 1 << l);
                }
                if a % 8 != 0 || a + 8 > shared.len() as u64 {
                    let why = format!(
                        "completes on shared byte {a}, but an mbarrier object is 8 bytes, 8-aligned, inside the block's {} bytes of shared memory",
                        shared.len()
                    );
                    return Err(self.misuse(pc, w, Some(l), &why));
                }
                let a = a as u32;
                let phase = self.sync.mbars.objs.get(&a).map(|m| m.phase);
                self.tx(a, -i64::from(n), wi).map_err(|e| {
                    let why = match e {
                        Misuse::Uninitialized(a) => format!(
                            "completes on the mbarrier at shared byte {a}, which no `mbarrier.init` has initialized (or which `mbarrier.inval` invalidated)"
                        ),
                        e => e.to_string(),
                    };
                    self.misuse(pc, w, Some(l), &why)
                })?;
                if let Some(phase) = phase.filter(|_| on) {
                    let tid = w.first_tid + l as u32;
                    let to = (s as u32, (s + u64::from(n)) as u32);
                    self.chk.bulk_load(to, tid, pc as u32, (a, phase));
                }
            }
            None if on => {
                let tid = w.first_tid + l as u32;
                self.chk.bulk.read(s as u32, s as u32 + n, tid, pc as u32);
            }
            None => {}
        }
        Ok(())
    }
}
