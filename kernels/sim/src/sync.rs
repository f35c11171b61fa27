//! A block's synchronization objects, as plain data: the named barriers ([`Named`]), the
//! `mbarrier` objects ([`Mbars`]) and the groups waiting on either ([`BlockSync`]). `named`
//! and `mbarrier` run the instructions that change them; `sched` wakes what they release.

use crate::order::Clock;
use std::collections::BTreeMap;

/// One named barrier's current phase.
#[derive(Clone, Default)]
pub struct Named {
    /// Warps counted in this phase (bit per warp).
    pub warps: u32,
    pub expected: u32,
    /// The instruction of the first arrival, and whether some arrival named another count.
    pub first: Option<u32>,
    pub mismatch: bool,
    /// Groups waiting: (warp, resume pc, lanes).
    pub waiters: Vec<(usize, u32, u32)>,
    pub clock: Clock,
}

/// A block's synchronization objects: the named barriers, the `mbarrier`s, the groups
/// released and not yet rescheduled, the groups spinning on an `mbarrier` wait, and the
/// `setmaxnreg`s per warp.
#[derive(Default)]
pub struct BlockSync {
    pub bars: Vec<Named>,
    pub released: Vec<(usize, u32, u32)>,
    /// Groups whose `mbarrier` wait failed: (warp, the wait's pc, lanes); they go on at the
    /// next instruction when the block has nothing else to run (`sched`).
    pub spinners: Vec<Spin>,
    pub mbars: Mbars,
    /// A fingerprint of the block when the spinners were last woken (`sched`).
    pub last_wake: Option<u64>,
    pub maxnreg: Vec<(u32, u32)>,
    /// The tensor maps each thread acquired: (thread, generic address, at `.sys` scope)
    /// (`host_maps`).
    pub acquired: Vec<(u32, u64, bool)>,
}

impl Named {
    /// "64 of the 128 threads it expects have arrived".
    pub fn tally(&self) -> String {
        format!(
            "{} of the {} threads it expects have arrived{}",
            self.warps.count_ones() * 32,
            self.expected,
            if self.mismatch {
                " (its arrivals named different thread counts)"
            } else {
                ""
            }
        )
    }
}

impl BlockSync {
    pub fn new(warps: usize) -> Self {
        BlockSync {
            bars: vec![Named::default(); 16],
            maxnreg: vec![(0, 0); warps],
            ..Default::default()
        }
    }

    /// Whether any group waits at a named barrier or on an `mbarrier`.
    pub fn waiting(&self) -> bool {
        !self.spinners.is_empty() || self.bars.iter().any(|b| !b.waiters.is_empty())
    }

    /// The lanes of warp `wi` that wait at a named barrier or on an `mbarrier`, or that one
    /// released and that have not run since: they may still go on.
    pub fn waiting_lanes(&self, wi: usize) -> u32 {
        let named = self
            .bars
            .iter()
            .flat_map(|b| &b.waiters)
            .chain(&self.released);
        let spin = self.spinners.iter().map(|s| (s.warp, s.lanes));
        named
            .map(|&(w, _, m)| (w, m))
            .chain(spin)
            .filter(|g| g.0 == wi)
            .fold(0, |m, g| m | g.1)
    }
}

/// One object's state.
#[derive(Clone, Default)]
pub struct Mbar {
    pub expected: u32,
    pub pending: u32,
    /// The current phase's transaction count: bytes announced minus bytes come.
    pub tx: i64,
    pub phase: u32,
    pub valid: bool,
    /// The clocks of the current phase's arrivals, and of the last completed phase.
    pub clock: Clock,
    pub done: Clock,
}

impl Mbar {
    /// The current phase completes: the next one expects the same arrivals.
    pub fn complete(&mut self) {
        self.phase += 1;
        self.pending = self.expected;
        self.tx = 0;
        self.done = std::mem::take(&mut self.clock);
    }
}

/// A block's `mbarrier` objects by shared offset.
#[derive(Default)]
pub struct Mbars {
    pub objs: BTreeMap<u32, Mbar>,
    pub generation: u64,
}

/// A group whose wait failed: its warp, the wait's pc, its lanes and the object's offset.
pub struct Spin {
    pub warp: usize,
    pub pc: u32,
    pub lanes: u32,
    pub at: u32,
}

impl Mbars {
    /// Grows with every change of any object (for `sched`'s fingerprint).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// What the object a spinner waits on is doing, for the deadlock sentence.
    pub fn tally(&self, s: &Spin) -> String {
        let Some(m) = self.objs.get(&s.at) else {
            return "a phase to complete".into();
        };
        let mut t = format!(
            "a phase to complete; its current phase {} (parity {}) still waits for {} of its {} expected arrivals",
            m.phase,
            m.phase & 1,
            m.pending,
            m.expected
        );
        if m.tx > 0 {
            t += &format!(
                " and for {} more bytes of copies (its transaction count: `expect_tx` announced more bytes than the bulk copies that complete on it brought)",
                m.tx
            );
        } else if m.tx < 0 {
            t += &format!(
                " and its transaction count is {} bytes: the bulk copies that complete on it brought {} bytes more than `expect_tx` announced, so the count never comes back to zero",
                m.tx, -m.tx
            );
        }
        if m.phase >= 2 {
            // Phases alternate parities: a parity wait that falls a whole phase behind
            // (a producer that did not wait for a free stage, a parity computed one phase
            // off) asks for the phase in progress.
            t += &format!(
                " (phase {} had parity {} too and has completed: a wait for parity {} that comes a whole phase late waits for this phase instead)",
                m.phase - 2,
                m.phase & 1,
                m.phase & 1
            );
        }
        t
    }
}
