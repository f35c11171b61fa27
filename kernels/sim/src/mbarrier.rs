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

/// The most an mbarrier's counts hold: its expected arrivals, and its transaction count either
/// way (2^20 - 1).
const MAX_COUNT: u32 = (1 << 20) - 1;

/// A lane's misuse of an mbarrier object, as the sentence after the instruction's text says it
/// (`Machine::misuse`).
#[derive(Clone, Debug, thiserror::Error)]
pub(super) enum Misuse {
    #[error(
        "is given address {0:#x}, which is not in shared memory: an mbarrier object lives in shared memory"
    )]
    NotShared(u64),
    #[error(
        "is given shared byte {byte}, but an mbarrier object is 8 bytes, 8-aligned, inside the block's {shared} bytes of shared memory"
    )]
    Misplaced { byte: u64, shared: usize },
    #[error(
        "uses the mbarrier at shared byte {0}, which no `mbarrier.init` has initialized (or which `mbarrier.inval` invalidated): initialize it once, then make the initialization visible (`__syncthreads()`) before any thread uses it"
    )]
    Uninitialized(u32),
    #[error(
        "arrives {k} time(s) on the mbarrier at shared byte {a}, but its current phase {phase} has only {pending} of its {expected} expected arrivals left: more arrivals than it was initialized for"
    )]
    OverArrival {
        k: u32,
        a: u32,
        phase: u32,
        pending: u32,
        expected: u32,
    },
    #[error(
        "is a `noComplete` arrival but completes the current phase {phase} of the mbarrier at shared byte {a}"
    )]
    Completes { phase: u32, a: u32 },
    #[error(
        "takes the transaction count of the mbarrier at shared byte {a} to {tx} bytes, outside the -(2^20 - 1) to 2^20 - 1 an mbarrier holds: split the copies over more phases"
    )]
    TxRange { a: u32, tx: i64 },
}

fn uninitialized(a: u32) -> String {
    Misuse::Uninitialized(a).to_string()
}

/// The object each lane of `exec` names: the address `addr` in `space` (generic or shared) as
/// an offset into the block's `shared` bytes, or why it cannot hold an object.
fn addresses(
    w: &mut Warp,
    exec: u32,
    shared: usize,
    addr: Addr,
    space: Space,
) -> [Result<u32, Misuse>; 32] {
    let cx = w.ctx(exec, 0);
    let base = addr.base.map_or([0; 32], |b| cx.get(Src::Reg(b)));
    std::array::from_fn(|l| {
        let a = base[l].wrapping_add(addr.off as u64);
        let a = match space {
            Space::Shared => a,
            _ if a >> REGION_SHIFT == SHARED_REGION => a & ((1 << REGION_SHIFT) - 1),
            _ => return Err(Misuse::NotShared(a)),
        };
        if a % 8 != 0 || a + 8 > shared as u64 {
            return Err(Misuse::Misplaced { byte: a, shared });
        }
        Ok(a as u32)
    })
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
        let at =
            |addr: Addr, space: Space, w: &mut Warp| addresses(w, exec, shared.len(), addr, space);
        let lanes: Vec<usize> = (0..32).filter(|l| exec >> l & 1 == 1).collect();
        if !matches!(op, MbarOp::Wait { .. } | MbarOp::PendingCount { .. }) {
            self.sync.mbars.generation += 1;
        }
        match *op {
            MbarOp::Init { addr, space, count } => {
                let (ats, n) = (at(addr, space, w), w.ctx(exec, 0).get(count));
                self.mbar_init(w, pc, &lanes, &ats, n)?;
            }
            MbarOp::Inval { addr, space } => {
                let ats = at(addr, space, w);
                for &l in &lanes {
                    let a = ats[l]
                        .clone()
                        .map_err(|e| self.misuse(pc, w, Some(l), &e.to_string()))?;
                    match self.sync.mbars.objs.get_mut(&a) {
                        Some(m) if m.valid => m.valid = false,
                        _ => return Err(self.misuse(pc, w, Some(l), &uninitialized(a))),
                    }
                    self.chk.mbar.inval(a);
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
                self.mbar_wait(w, (exec, pc), &ats, (p, parity), t)?;
            }
        }
        w.pc += 1;
        Ok(())
    }

    /// `mbarrier.init` by `lanes`, each of its object at `ats[l]` with the expected count `n[l]`.
    fn mbar_init(
        &mut self,
        w: &Warp,
        pc: usize,
        lanes: &[usize],
        ats: &[Result<u32, Misuse>; 32],
        n: [u64; 32],
    ) -> Result<(), Located> {
        let fail = |m: &Self, l: usize, why: String| m.misuse(pc, w, Some(l), &why);
        for &l in lanes {
            let a = ats[l].clone().map_err(|e| fail(self, l, e.to_string()))?;
            let n = n[l] as u32;
            if n == 0 || n > MAX_COUNT {
                return Err(fail(
                    self,
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
            self.chk.mbar.init(a);
        }
        Ok(())
    }

    /// `mbarrier.test_wait`/`try_wait` (`parity`: on a phase's parity, else on the state token
    /// `t[l]`) by the lanes `exec` at `pc` into predicate `p`: the lanes whose phase completed are
    /// ordered after it (and its bulk copies); the others park until the block has nothing
    /// else to run (`sched`).
    fn mbar_wait(
        &mut self,
        w: &mut Warp,
        (exec, pc): (u32, usize),
        ats: &[Result<u32, Misuse>; 32],
        (p, parity): (PSlot, bool),
        t: [u64; 32],
    ) -> Result<(), Located> {
        let wi = (w.first_tid / 32) as usize;
        let on = self.chk.on;
        let (mut ok, mut spin, mut saw) = (0u32, None, vec![]);
        let bulk = on && self.chk.flight.bulk_any();
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            let a = ats[l]
                .clone()
                .map_err(|e| self.misuse(pc, w, Some(l), &e.to_string()))?;
            let Some(m) = self.sync.mbars.objs.get(&a).filter(|m| m.valid) else {
                return Err(self.misuse(pc, w, Some(l), &uninitialized(a)));
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
        ats: [Result<u32, Misuse>; 32],
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
            let a = ats[l].clone().map_err(|e| fail(self, l, e.to_string()))?;
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
                .map_err(|e| fail(self, l, e.to_string()))?;
            if self.sync.mbars.objs.get(&a).map(|m| m.phase) != phase {
                completed.push((a, l));
            }
        }
        Ok(tokens)
    }

    /// `k` arrivals on the object at `a` by warp `wi`; the state token.
    fn arrive(&mut self, a: u32, k: u32, no_complete: bool, wi: usize) -> Result<u64, Misuse> {
        let Some(m) = self.sync.mbars.objs.get_mut(&a).filter(|m| m.valid) else {
            return Err(Misuse::Uninitialized(a));
        };
        if k > m.pending {
            return Err(Misuse::OverArrival {
                k,
                a,
                phase: m.phase,
                pending: m.pending,
                expected: m.expected,
            });
        }
        if self.chk.on {
            self.chk.order.release(wi, &mut m.clock);
        }
        // The state before this arrival, as the ISA says the token captures.
        let token = u64::from(m.phase) << 32 | u64::from(m.pending);
        m.pending -= k;
        if m.pending == 0 && m.tx == 0 {
            if no_complete {
                return Err(Misuse::Completes { phase: m.phase, a });
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
        ats: &[Result<u32, Misuse>; 32],
        bytes: [u64; 32],
        expect: bool,
    ) -> Result<(), Located> {
        let wi = (w.first_tid / 32) as usize;
        for &l in lanes {
            let a = ats[l]
                .clone()
                .map_err(|e| self.misuse(pc, w, Some(l), &e.to_string()))?;
            let n = i64::from(bytes[l] as u32);
            self.tx(a, if expect { n } else { -n }, wi)
                .map_err(|e| self.misuse(pc, w, Some(l), &e.to_string()))?;
        }
        Ok(())
    }

    /// `bytes` added to (announced: positive) or taken off (come: negative) the transaction
    /// count of the object at `a`, by warp `wi`: the phase completes if nothing else is
    /// pending.
    pub(super) fn tx(&mut self, a: u32, bytes: i64, wi: usize) -> Result<(), Misuse> {
        let Some(m) = self.sync.mbars.objs.get_mut(&a).filter(|m| m.valid) else {
            return Err(Misuse::Uninitialized(a));
        };
        self.sync.mbars.generation += 1;
        const LIMIT: i64 = MAX_COUNT as i64;
        let tx = m.tx + bytes;
        if !(-LIMIT..=LIMIT).contains(&tx) {
            return Err(Misuse::TxRange { a, tx });
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
        let (inst, tid, write) = self.chk.mbar.touch.take().unwrap_or_default();
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
