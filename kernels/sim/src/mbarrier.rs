//! `mbarrier`: the shared-memory barrier objects of compute capability 8.0 and 9.0, per the
//! PTX ISA ("Parallel Synchronization and Communication Instructions: mbarrier"), and
//! `cp.async.mbarrier.arrive`.
//!
//! An object is 8 bytes of shared memory; its state lives here, keyed by its offset (the bytes
//! themselves are not written, and an ordinary load or store of them is a diagnostic). A phase
//! has an expected arrival count (from `init`) and a pending count; each arrival (per thread,
//! `count` of them with the operand) lowers the pending count, and at zero the phase completes:
//! the pending count goes back to the expected one and the phase number (its parity) advances.
//! `arrive` returns a state token of the object before the arrival: here the phase number in the
//! high word and the pending count in the low one (`pending_count` reads it back). `test_wait`/`try_wait` with
//! a token are true once that phase has completed; with `.parity` once the phase of that parity
//! before the current one has (a wait on the current phase's parity is false). A failed wait
//! parks its lanes, the predicate false, until the block has nothing else to run (`sched`): the
//! kernel's retry loop then runs again, and one that can never succeed is a deadlock, not an
//! endless run. Ordering for the race check: an arrival releases its warp's clock into the
//! phase, a wait that succeeds acquires the completed phase's clock (`order`) and orders its
//! lanes after the bulk copies counted on that phase (`inflight`).
//! `cp.async.mbarrier.arrive` lands the thread's `cp.async` copies first (they are complete when
//! its arrival counts), then arrives (`.noinc`) or only orders (without `.noinc` the pending
//! count is raised and lowered again). Misuse is diagnosed at the line: an object never
//! initialized (or invalidated), an arrival past the pending count, `init` of an object in use,
//! a `noComplete` arrival that completes the phase.
//!
//! Transaction counts (the PTX ISA's "tx-count", for the bulk copies of `bulk`): a phase also
//! waits until the bytes announced by `expect_tx` (alone, or with an arrival:
//! `arrive.expect_tx`) have come, each bulk copy's `complete_tx` (or `mbarrier.complete_tx`)
//! taking its bytes off; it completes when no arrival is pending and the count is zero. The
//! count may go below zero for a while (a copy that lands before its bytes were announced), as
//! the ISA allows. A count that never comes back to zero leaves the phase waiting: a deadlock
//! whose sentence gives the bytes still owed. `arrive_drop` and clusters are not simulated.

use crate::fault::{Fault, Located};
use crate::machine::{Machine, Warp};
use crate::memory::{REGION_SHIFT, SHARED_REGION};
use crate::sync::{Mbar, Spin};
pub use ptx::ir::MbarOp;
use ptx::ir::*;

fn uninitialized(a: u32) -> String {
    format!(
        "uses the mbarrier at shared byte {a}, which no `mbarrier.init` has initialized (or which `mbarrier.inval` invalidated): initialize it once, then make the initialization visible (`__syncthreads()`) before any thread uses it"
    )
}

impl Machine<'_> {
    /// One `mbarrier` instruction over the lanes `exec` of warp `w`, in lane order.
    pub(super) fn mbar(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &MbarOp,
    ) -> Result<(), Located> {
        let wi = (w.first_tid / 32) as usize;
        let at = |addr: Addr, space: Space, w: &mut Warp| -> [Result<u32, String>; 32] {
            let cx = w.ctx(exec, 0);
            let base = addr.base.map_or([0; 32], |b| cx.get(Src::Reg(b)));
            std::array::from_fn(|l| {
                let a = base[l].wrapping_add(addr.off as u64);
                let a = match space {
                    Space::Shared => a,
                    _ if a >> REGION_SHIFT == SHARED_REGION => a & ((1 << REGION_SHIFT) - 1),
                    _ => {
                        return Err(format!(
                            "is given address {a:#x}, which is not in shared memory: an mbarrier object lives in shared memory"
                        ));
                    }
                };
                if a % 8 != 0 || a + 8 > shared.len() as u64 {
                    return Err(format!(
                        "is given shared byte {a}, but an mbarrier object is 8 bytes, 8-aligned, inside the block's {} bytes of shared memory",
                        shared.len()
                    ));
                }
                Ok(a as u32)
            })
        };
        let lanes: Vec<usize> = (0..32).filter(|l| exec >> l & 1 == 1).collect();
        let fail = |m: &Self, w: &Warp, l: usize, why: String| m.misuse(pc, w, Some(l), &why);
        if !matches!(op, MbarOp::Wait { .. } | MbarOp::PendingCount { .. }) {
            self.sync.mbars.generation += 1;
        }
        let on = self.chk.on;
        match *op {
            MbarOp::Init { addr, space, count } => {
                let (ats, n) = (at(addr, space, w), w.ctx(exec, 0).get(count));
                for &l in &lanes {
                    let a = ats[l].clone().map_err(|e| fail(self, w, l, e))?;
                    let n = n[l] as u32;
                    if n == 0 || n >= 1 << 20 {
                        return Err(fail(
                            self,
                            w,
                            l,
                            format!("sets an expected count of {n}, but it must be 1 to 2^20 - 1"),
                        ));
                    }
                    if let Some(m) = self.sync.mbars.objs.get(&a)
                        && m.valid
                        && (m.phase > 0 || m.pending != m.expected || m.tx != 0)
                    {
                        return Err(fail(
                            self,
                            w,
                            l,
                            format!(
                                "initializes the mbarrier at shared byte {a} again while it is in use (phase {}, {} of {} arrivals pending): `mbarrier.inval` it first, once no thread uses it",
                                m.phase, m.pending, m.expected
                            ),
                        ));
                    }
                    self.sync.mbars.objs.insert(
                        a,
                        Mbar {
                            expected: n,
                            pending: n,
                            valid: true,
                            ..Mbar::default()
                        },
                    );
                    if !self.chk.mbar_bytes.contains(&(a, a + 8)) {
                        self.chk.mbar_bytes.push((a, a + 8));
                    }
                }
            }
            MbarOp::Inval { addr, space } => {
                let ats = at(addr, space, w);
                for &l in &lanes {
                    let a = ats[l].clone().map_err(|e| fail(self, w, l, e))?;
                    match self.sync.mbars.objs.get_mut(&a) {
                        Some(m) if m.valid => m.valid = false,
                        _ => return Err(fail(self, w, l, uninitialized(a))),
                    }
                    self.chk.mbar_bytes.retain(|r| r.0 != a);
                }
            }
            MbarOp::PendingCount { d, state } => {
                let mut cx = w.ctx(exec, 0);
                let s = cx.get(state);
                cx.put(d, &s.map(|t| t & 0xffff_ffff));
            }
            MbarOp::Tx {
                addr,
                space,
                bytes,
                expect,
            } => {
                let (ats, n) = (at(addr, space, w), w.ctx(exec, 0).get(bytes));
                self.tx_lanes(w, pc, &lanes, &ats, n, expect)?;
            }
            MbarOp::Arrive {
                d,
                addr,
                space,
                count,
                no_complete,
                expect_tx,
            } => {
                let ats = at(addr, space, w);
                if let Some(b) = expect_tx {
                    let n = w.ctx(exec, 0).get(b);
                    self.tx_lanes(w, pc, &lanes, &ats, n, true)?;
                }
                let n = count.map(|c| w.ctx(exec, 0).get(c));
                let k = std::array::from_fn(|l| n.map_or(1, |n| n[l] as u32));
                let tokens = self.arrive_lanes(w, exec, pc, ats, k, no_complete)?;
                if let Some(d) = d {
                    w.ctx(exec, 0).put(d, &tokens);
                }
            }
            MbarOp::CpAsyncArrive { addr, space, noinc } => {
                let ats = at(addr, space, w);
                self.land(w, shared, exec, |_, _| true)?;
                self.arrive_lanes(w, exec, pc, ats, [u32::from(noinc); 32], false)?;
            }
            MbarOp::Wait {
                p,
                addr,
                space,
                parity,
                token,
            } => {
                let ats = at(addr, space, w);
                let t = w.ctx(exec, 0).get(token);
                let (mut ok, mut spin, mut saw) = (0u32, None, vec![]);
                let bulk = on && self.chk.flight.bulk_any();
                for &l in &lanes {
                    let a = ats[l].clone().map_err(|e| fail(self, w, l, e))?;
                    let Some(m) = self.sync.mbars.objs.get(&a).filter(|m| m.valid) else {
                        return Err(fail(self, w, l, uninitialized(a)));
                    };
                    let done = if parity {
                        u64::from(m.phase & 1) != t[l] & 1
                    } else {
                        u64::from(m.phase) > t[l] >> 32
                    };
                    if done {
                        ok |= 1 << l;
                        // The phase seen complete: the one before the current (`.parity`), or
                        // the token's.
                        let seen = if parity {
                            m.phase.checked_sub(1)
                        } else {
                            Some((t[l] >> 32) as u32)
                        };
                        if let Some(q) = seen.filter(|_| bulk) {
                            saw.push((1u32 << l, a, q));
                        }
                        if on {
                            self.chk.order.acquire(wi, &m.done);
                        }
                    } else {
                        spin.get_or_insert(a);
                    }
                }
                if ok != 0 {
                    self.chk.syncwarp(w.first_tid, ok);
                }
                for (lane, a, q) in saw {
                    self.chk.bulk_waited(w.first_tid, lane, (a, q));
                }
                let v = w.preds[p as usize];
                w.preds[p as usize] = v & !exec | ok;
                let failed = exec & !ok;
                if let Some(a) = spin {
                    w.active &= !failed;
                    self.sync.spinners.push(Spin {
                        warp: wi,
                        pc: pc as u32,
                        lanes: failed,
                        at: a,
                    });
                }
            }
        }
        w.pc += 1;
        Ok(())
    }

    /// The arrivals of the lanes `exec` (lane `l` on the object at `ats[l]`, `k[l]` times), in
    /// lane order; their state tokens. A lane arriving on an object whose phase an earlier lane
    /// of the same instruction completed is an over-arrival too (a warp where one thread
    /// should have arrived).
    fn arrive_lanes(
        &mut self,
        w: &Warp,
        exec: u32,
        pc: usize,
        ats: [Result<u32, String>; 32],
        k: [u32; 32],
        no_complete: bool,
    ) -> Result<[u64; 32], Located> {
        let wi = (w.first_tid / 32) as usize;
        let fail = |m: &Self, l: usize, why: String| m.misuse(pc, w, Some(l), &why);
        // Lanes of one warp are ordered through the object as a `__syncwarp()` orders them.
        self.chk.syncwarp(w.first_tid, exec);
        let mut tokens = [0u64; 32];
        let mut completed: Vec<(u32, usize)> = vec![];
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            let a = ats[l].clone().map_err(|e| fail(self, l, e))?;
            if let Some(&(_, first)) = completed.iter().find(|c| c.0 == a) {
                let why = format!(
                    "arrives on the mbarrier at shared byte {a} after thread {}'s arrival in the same instruction completed its phase: more arrivals than it was initialized for (should only one thread arrive, e.g. `if (lane == 0)`?)",
                    w.first_tid + first as u32
                );
                return Err(fail(self, l, why));
            }
            let phase = self.sync.mbars.objs.get(&a).map(|m| m.phase);
            tokens[l] = self
                .arrive(a, k[l], no_complete, wi)
                .map_err(|e| fail(self, l, e.unwrap_or_else(|| uninitialized(a))))?;
            if self.sync.mbars.objs.get(&a).map(|m| m.phase) != phase {
                completed.push((a, l));
            }
        }
        Ok(tokens)
    }

    /// `k` arrivals on the object at `a` by warp `wi`; the state token. `Err(None)`: not
    /// initialized; `Err(Some(why))`: misuse.
    fn arrive(
        &mut self,
        a: u32,
        k: u32,
        no_complete: bool,
        wi: usize,
    ) -> Result<u64, Option<String>> {
        let Some(m) = self.sync.mbars.objs.get_mut(&a).filter(|m| m.valid) else {
            return Err(None);
        };
        if k > m.pending {
            return Err(Some(format!(
                "arrives {k} time(s) on the mbarrier at shared byte {a}, but its current phase {} has only {} of its {} expected arrivals left: more arrivals than it was initialized for",
                m.phase, m.pending, m.expected
            )));
        }
        if self.chk.on {
            self.chk.order.release(wi, &mut m.clock);
        }
        // The state before this arrival, as the ISA says the token captures.
        let token = u64::from(m.phase) << 32 | u64::from(m.pending);
        m.pending -= k;
        if m.pending == 0 && m.tx == 0 {
            if no_complete {
                return Err(Some(format!(
                    "is a `noComplete` arrival but completes the current phase {} of the mbarrier at shared byte {a}",
                    m.phase
                )));
            }
            m.complete();
        }
        Ok(token)
    }

    /// The transaction counts of `lanes`, each on its object (`ats`): `bytes` announced
    /// (`expect`) or come.
    fn tx_lanes(
        &mut self,
        w: &Warp,
        pc: usize,
        lanes: &[usize],
        ats: &[Result<u32, String>; 32],
        bytes: [u64; 32],
        expect: bool,
    ) -> Result<(), Located> {
        let wi = (w.first_tid / 32) as usize;
        for &l in lanes {
            let a = ats[l]
                .clone()
                .map_err(|e| self.misuse(pc, w, Some(l), &e))?;
            let n = i64::from(bytes[l] as u32);
            self.tx(a, if expect { n } else { -n }, wi).map_err(|e| {
                let why = e.unwrap_or_else(|| uninitialized(a));
                self.misuse(pc, w, Some(l), &why)
            })?;
        }
        Ok(())
    }

    /// `bytes` added to (announced: positive) or taken off (come: negative) the transaction
    /// count of the object at `a`, by warp `wi`: the phase completes if nothing else is
    /// pending. `Err(None)`: not initialized; `Err(Some(why))`: misuse.
    pub(super) fn tx(&mut self, a: u32, bytes: i64, wi: usize) -> Result<(), Option<String>> {
        let Some(m) = self.sync.mbars.objs.get_mut(&a).filter(|m| m.valid) else {
            return Err(None);
        };
        self.sync.mbars.generation += 1;
        const LIMIT: i64 = (1 << 20) - 1;
        let tx = m.tx + bytes;
        if !(-LIMIT..=LIMIT).contains(&tx) {
            return Err(Some(format!(
                "takes the transaction count of the mbarrier at shared byte {a} to {tx} bytes, outside the -(2^20 - 1) to 2^20 - 1 an mbarrier holds: split the copies over more phases"
            )));
        }
        if self.chk.on {
            self.chk.order.release(wi, &mut m.clock);
        }
        m.tx = tx;
        if m.pending == 0 && m.tx == 0 {
            m.complete();
        }
        Ok(())
    }

    /// The diagnostic of an ordinary load or store of an `mbarrier` object's bytes.
    pub(super) fn mbar_touched(&mut self, w: &Warp) -> Located {
        let (inst, tid, write) = self.chk.mbar_touch.take().unwrap_or_default();
        let detail = format!(
            "an ordinary {} the 8 bytes of an initialized mbarrier object: its state is read and changed only by `mbarrier.*` instructions (is a pointer off, or is the object's memory reused without `mbarrier.inval`?)",
            if write { "store writes" } else { "load reads" }
        );
        let lane = tid.checked_sub(w.first_tid).map(|l| l as usize);
        self.fault(
            Fault::BarrierDivergence { detail },
            Some(inst as usize),
            Some(w),
            lane,
        )
    }
}
