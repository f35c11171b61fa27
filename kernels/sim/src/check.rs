//! The teaching checks of one launch ([`Checks`]): their lifecycle (blocks, barriers, the end of
//! the launch), the findings kept per kind, and shared memory's shadow. Global memory's shadow
//! is in `check_global`, the access budgets' counters in `budget`, copies in flight in
//! `inflight`.
//!
//! Shared memory has one [`Word`] of shadow per 4 bytes, reset for each block (a word that an
//! access of fewer than its 4 bytes touches is split into a shadow per byte, so two threads
//! writing different halves or bytes of one word are no race): who last wrote it,
//! at which instruction and in which barrier epoch (the epoch grows at every released
//! `bar.sync`), and who read it in the current epoch. Two different threads touching one word in
//! the same epoch, one of them writing, is a race, whatever warp they are in: code that relies on
//! lockstep counts too, unless a `__syncwarp()` (`bar.warp.sync`) orders them: two threads of
//! one warp are ordered when both have passed a `__syncwarp()` of their warp since the earlier
//! access (each lane remembers the last one it executed; a `__syncwarp()` counts for the lanes
//! that execute it together, whatever its mask says). A read of a word no thread of the block has
//! written yet is held until the epoch ends: if another thread writes it later in the same epoch
//! without such an order the race is the diagnosis, otherwise it is an uninitialized read. The
//! shared sources of bulk stores still being read, and `cp.async` and bulk copies in flight, are
//! checked here too (`inflight`). Atomics never race with each other. What the checks find are
//! [`Finding`] values, capped per kind; `explain` turns them into diagnostics.

use crate::budget::Budgets;
pub use crate::finding::Acc;
use crate::finding::{Access, Finding, Kept};
use crate::inflight::BulkStores;
use ptx::ir::Program;
use spec::job::{AccessStats, Budget, Pitch};

/// Distinct findings kept per kind (a finding is distinct by its kind and instructions).
pub const CAP: usize = 3;
/// Reads of never-written shared words waiting for their epoch to end.
pub(super) const PENDING_CAP: usize = 4096;
pub(super) const ATOMIC: u32 = u32::MAX;

/// Shadow of one shared 4-byte word. Thread fields hold the block-linear id plus one (0: none).
#[derive(Clone, Copy, Default)]
pub(super) struct Word {
    pub(super) w: u32,
    pub(super) w_inst: u32,
    pub(super) w_epoch: u32,
    pub(super) r: u32,
    pub(super) r2: u32,
    pub(super) r_inst: u32,
    pub(super) r_epoch: u32,
    /// The writer's (the latest reader's) warp `__syncwarp()` count at the access.
    pub(super) w_seq: u32,
    pub(super) r_seq: u32,
    /// The writer's and the two readers' warp clock stamps (`order`).
    pub(super) w_clk: u32,
    pub(super) r_clk: u32,
    pub(super) r2_clk: u32,
    /// 0, or 1 + the index in `Checks::bytes` of this word's four byte shadows, once an
    /// access touched part of it.
    pub(super) split: u32,
}

/// Shadow of one global 4-byte element. Thread fields hold the launch-linear id plus one.
#[derive(Clone, Copy, Default)]
pub(super) struct Elem {
    pub(super) w: u32,
    pub(super) w_inst: u32,
    pub(super) r: u32,
    pub(super) r2: u32,
    pub(super) r_inst: u32,
}

/// Which shadow an access goes to: a whole word's, or one byte's of a split word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shadow {
    Word(u32),
    Byte(u32),
}

/// A read of never-written shared memory held until its epoch ends.
#[derive(Clone, Copy)]
pub(super) struct Pending {
    at: Shadow,
    /// The first byte read and the read's width.
    byte: u32,
    width: u32,
    epoch: u32,
    reader: Access,
    /// The reader's `__syncwarp()` count and clock stamp at the read.
    seq: (u32, u32),
}

/// One access as one shadow sees it: the shadow, its first byte, the access's width in bytes
/// (findings index the array by it), the thread and instruction, and whether a finding is
/// already told for this access (`quiet`: found, not reported again).
#[derive(Clone, Copy)]
pub(super) struct One {
    pub(super) at: Shadow,
    pub(super) byte: u32,
    pub(super) width: u32,
    pub(super) tid: u32,
    pub(super) inst: u32,
    pub(super) quiet: bool,
}

/// The checks of one launch.
pub struct Checks {
    pub on: bool,
    /// The learner's line of each instruction.
    pub(super) lines: Vec<u32>,
    pub(super) budget: Option<Budget>,
    pub(super) tpb: u32,
    pub(super) block: u32,
    pub(super) epoch: u32,
    pub(super) shared: Vec<Word>,
    /// The byte shadows of split words, four per word.
    pub(super) bytes: Vec<Word>,
    pub(super) pending: Vec<Pending>,
    /// `__syncwarp()`s executed per warp of the block, and the latest each thread executed.
    pub(super) warp_seq: Vec<u32>,
    pub(super) lane_seq: Vec<u32>,
    /// Happens-before through named barriers and `mbarrier` phases.
    pub(super) order: crate::order::Order,
    /// The initialized `mbarrier` objects, and the first ordinary access to one.
    pub(super) mbar: MbarObjects,
    /// Bulk stores still reading their shared source or writing their global destination.
    pub(super) bulk: BulkStores,
    /// The shared words under `cp.async` and bulk copies in flight (`inflight`).
    pub(super) flight: crate::inflight::InFlight,
    pub(super) globals: Vec<Vec<Elem>>,
    pub(super) track_reads: Vec<bool>,
    /// Per buffer, its shape when it is a pitched output (writes into its padding are findings).
    pub(super) pitches: Vec<Option<Pitch>>,
    /// The counters of the access budgets (`budget`).
    pub(crate) budgets: Budgets,
    pub stats: AccessStats,
    pub kept: Vec<Kept>,
}

/// The shared bytes `[lo, hi)` of initialized `mbarrier` objects, and the first ordinary
/// access to one (instruction, thread, write), which `exec` turns into a diagnostic.
#[derive(Default)]
pub(super) struct MbarObjects {
    bytes: Vec<(u32, u32)>,
    pub(super) touch: Option<(u32, u32, bool)>,
}

impl MbarObjects {
    /// `mbarrier.init` of the object at shared byte `a`.
    pub(super) fn init(&mut self, a: u32) {
        if !self.bytes.contains(&(a, a + 8)) {
            self.bytes.push((a, a + 8));
        }
    }

    /// `mbarrier.inval` of the object at shared byte `a`.
    pub(super) fn inval(&mut self, a: u32) {
        self.bytes.retain(|r| r.0 != a);
    }

    /// An ordinary access of shared bytes `[lo, hi)` by thread `tid` at `inst`: kept if it is
    /// the first to touch an object.
    #[inline]
    fn access(&mut self, (lo, hi): (u32, u32), inst: u32, tid: u32, write: bool) {
        if !self.bytes.is_empty()
            && self.touch.is_none()
            && self.bytes.iter().any(|&(a, b)| lo < b && a < hi)
        {
            self.touch = Some((inst, tid, write));
        }
    }

    fn reset(&mut self) {
        self.bytes.clear();
        self.touch = None;
    }
}

impl Checks {
    /// Checks for a launch of `tpb` threads per block over global buffers of `lens` bytes
    /// (`outputs[i]`: buffer `i` is an output, whose reads are tracked too).
    pub fn new(
        on: bool,
        prog: &Program,
        budget: Option<Budget>,
        tpb: u32,
        lens: &[usize],
        outputs: &[bool],
    ) -> Self {
        let globals = if on {
            lens.iter()
                .map(|&n| vec![Elem::default(); n.div_ceil(4)])
                .collect()
        } else {
            vec![]
        };
        Checks {
            on,
            lines: prog.insts.iter().map(|i| i.line).collect(),
            budget,
            tpb,
            block: 0,
            epoch: 1,
            shared: vec![],
            bytes: vec![],
            pending: vec![],
            warp_seq: vec![0; tpb.div_ceil(32) as usize],
            lane_seq: vec![0; tpb as usize],
            order: Default::default(),
            mbar: MbarObjects::default(),
            bulk: BulkStores::new(tpb),
            flight: Default::default(),
            globals,
            track_reads: outputs.to_vec(),
            pitches: vec![None; lens.len()],
            budgets: Budgets::new(on, budget, tpb),
            stats: AccessStats::default(),
            kept: vec![],
        }
    }

    pub(super) fn report(&mut self, f: Finding) {
        let key = f.key(&self.lines);
        let lines = &self.lines;
        if let Some(k) = self.kept.iter_mut().find(|k| k.finding.key(lines) == key) {
            k.repeats += 1;
            return;
        }
        let same: Vec<usize> = (0..self.kept.len())
            .filter(|&i| self.kept[i].finding.key(lines).0 == key.0)
            .collect();
        match same.last() {
            Some(&last) if same.len() >= CAP => self.kept[last].hidden += 1,
            _ => self.kept.push(Kept {
                finding: f,
                repeats: 0,
                hidden: 0,
            }),
        }
    }

    /// A new block `linear` with `shared_bytes` of shared memory.
    pub fn begin_block(&mut self, linear: u32, shared_bytes: usize) {
        if !self.on {
            return;
        }
        self.block = linear;
        self.epoch = 1;
        self.budgets.staged.begin_block(shared_bytes);
        self.shared.clear();
        self.shared
            .resize(shared_bytes.div_ceil(4), Word::default());
        self.bytes.clear();
        self.warp_seq.iter_mut().for_each(|s| *s = 0);
        self.lane_seq.iter_mut().for_each(|s| *s = 0);
        self.order.reset(self.tpb.div_ceil(32) as usize);
        self.mbar.reset();
        self.bulk.reset();
        self.flight.reset();
        self.budgets.per_thread.begin_block();
        self.budgets.tile.begin_block();
    }

    /// A barrier released every thread of the block: a new epoch.
    pub fn barrier(&mut self) {
        if self.on {
            self.flush();
            self.epoch += 1;
            self.flight.bulk_barrier();
        }
    }

    /// The lanes `exec` of the warp whose first thread is `tid0` executed a `__syncwarp()`.
    pub fn syncwarp(&mut self, tid0: u32, exec: u32) {
        if !self.on {
            return;
        }
        let Some(seq) = self.warp_seq.get_mut(tid0 as usize / 32) else {
            return;
        };
        *seq += 1;
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            if let Some(s) = self.lane_seq.get_mut(tid0 as usize + l) {
                *s = *seq;
            }
        }
    }

    /// The warp `__syncwarp()` count of thread `tid` now.
    #[inline]
    pub(super) fn seq(&self, tid: u32) -> u32 {
        self.warp_seq.get(tid as usize / 32).copied().unwrap_or(0)
    }

    /// Whether an access by thread `a` when its warp's count was `seq` and its clock stamp
    /// `clk` happens before any later access by thread `b` in the same epoch: both of one warp
    /// and both past a later `__syncwarp()`, or ordered by a named barrier or an `mbarrier`
    /// phase between their warps (`order`).
    #[inline]
    pub(super) fn ordered(&self, a: u32, b: u32, (seq, clk): (u32, u32)) -> bool {
        let passed = |t: u32| self.lane_seq.get(t as usize).is_some_and(|&s| s > seq);
        a / 32 == b / 32 && passed(a) && passed(b) || self.order.before(a, clk, b)
    }

    pub fn end_block(&mut self) {
        if !self.on {
            return;
        }
        self.flush();
        self.budgets.per_thread.end_block(&mut self.stats);
        let (budget, block) = (self.budget, self.block);
        if let Some(f) = self.budgets.tile.end_block(budget, block, &mut self.stats) {
            self.report(f);
        }
    }

    /// Reports the held reads of never-written words that no other thread wrote in their epoch.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for Pending {
            at,
            byte,
            width,
            epoch,
            reader,
            seq,
        } in pending
        {
            let s = *self.shadow(at);
            let t = reader.thread;
            if s.w_epoch == epoch && s.w != t + 1 && !self.ordered(t, s.w - 1, seq) {
                continue; // reported as a race when the other thread wrote it
            }
            let block = self.block;
            self.report(Finding::Uninit {
                block,
                byte,
                width,
                reader,
            });
        }
    }

    pub(super) fn shadow(&mut self, at: Shadow) -> &mut Word {
        match at {
            Shadow::Word(w) => &mut self.shared[w as usize],
            Shadow::Byte(b) => &mut self.bytes[b as usize],
        }
    }

    /// The index of the first byte shadow of `word`, splitting it (each byte starting with the
    /// word's history, which a whole-word access made for all four bytes).
    pub(super) fn split(&mut self, word: usize) -> u32 {
        let s = self.shared[word];
        if s.split != 0 {
            return s.split - 1;
        }
        let first = self.bytes.len() as u32;
        self.bytes.extend([s; 4]);
        self.shared[word].split = first + 1;
        first
    }
}

impl Checks {
    /// A write of shared bytes `[lo, hi)` by thread `tid` at `inst` into the source of a bulk
    /// store still being read: a race with the store (reported once per store).
    fn bulk_overwrite(&mut self, lo: u32, hi: u32, tid: u32, inst: u32) {
        let Some(r) = self.bulk.overwritten(lo, hi) else {
            return;
        };
        let block = self.block;
        self.report(Finding::SharedRace {
            block,
            byte: lo.max(r.lo),
            width: (hi - lo).min(4),
            first: Access {
                thread: r.tid,
                inst: r.inst,
                write: false,
            },
            second: Access {
                thread: tid,
                inst,
                write: true,
            },
            flight: false,
        });
    }

    /// A shared access of `n` bytes at byte `at` by block-linear thread `tid`.
    #[inline]
    pub fn shared(&mut self, at: usize, n: usize, tid: u32, inst: u32, kind: Acc) {
        let end = at + n.max(1);
        if self.budgets.shared.on && kind == Acc::Read {
            self.budgets.shared.read(inst);
        }
        if self.flight.any() && kind != Acc::Quiet && self.in_flight(at, end, tid, inst, kind) {
            return;
        }
        if self.bulk.reading() && matches!(kind, Acc::Write | Acc::Atomic) {
            self.bulk_overwrite(at as u32, end as u32, tid, inst);
        }
        if kind != Acc::Quiet {
            let range = (at as u32, end as u32);
            self.mbar.access(range, inst, tid, kind != Acc::Read);
        }
        for word in at / 4..=(end - 1) / 4 {
            let Some(s) = self.shared.get(word) else {
                return;
            };
            let (lo, hi) = (at.max(word * 4), end.min(word * 4 + 4));
            let one = One {
                at: Shadow::Word(word as u32),
                byte: word as u32 * 4,
                width: n as u32,
                tid,
                inst,
                quiet: false,
            };
            if s.split == 0 && hi - lo == 4 {
                self.shared_one(one, kind);
            } else {
                // One finding per access, at its first byte that has one.
                let first = self.split(word);
                let mut told = false;
                for byte in lo..hi {
                    let at = Shadow::Byte(first + (byte - word * 4) as u32);
                    let o = One {
                        at,
                        byte: byte as u32,
                        quiet: told,
                        ..one
                    };
                    told |= self.shared_one(o, kind);
                }
            }
        }
    }

    /// An access to one shadow; true if it found something.
    #[inline]
    fn shared_one(&mut self, o: One, kind: Acc) -> bool {
        match kind {
            Acc::Read => self.shared_read(o),
            Acc::Write => self.shared_write(o),
            Acc::Atomic => {
                let (e, c) = (self.epoch, self.order.stamp(o.tid));
                let s = self.shadow(o.at);
                if s.w == 0 || s.w_epoch != e {
                    (s.w, s.w_inst, s.w_epoch, s.w_clk) = (o.tid + 1, o.inst, e, c);
                }
                false
            }
            Acc::Quiet => false,
        }
    }

    /// A read; true if it races or reads what nobody wrote (reported unless `o.quiet`).
    fn shared_read(&mut self, o: One) -> bool {
        let One {
            at,
            byte,
            width,
            tid,
            inst,
            quiet,
        } = o;
        let (t, e, q, c) = (tid + 1, self.epoch, self.seq(tid), self.order.stamp(tid));
        let s0 = *self.shadow(at);
        let race =
            s0.w_epoch == e && s0.w != t && !self.ordered(s0.w - 1, tid, (s0.w_seq, s0.w_clk));
        // Earlier readers ordered before this one (`__syncwarp()`, `order`) are done with it.
        let past = |r: u32, clk: u32| r == 0 || r == t || self.ordered(r - 1, tid, (s0.r_seq, clk));
        let fresh = s0.r_epoch != e || past(s0.r, s0.r_clk) && past(s0.r2, s0.r2_clk);
        let s = self.shadow(at);
        let me = Access {
            thread: tid,
            inst,
            write: false,
        };
        let race = race.then(|| Access {
            thread: s.w - 1,
            inst: s.w_inst,
            write: true,
        });
        let uninit = s.w == 0;
        if fresh {
            (s.r_epoch, s.r, s.r2, s.r_inst, s.r_clk) = (e, t, 0, inst, c);
        } else if s.r == t {
            s.r_clk = c;
        } else if s.r2 == 0 || s.r2 == t {
            (s.r2, s.r2_clk) = (t, c);
        }
        s.r_seq = q;
        if quiet {
            return uninit || race.is_some();
        }
        if uninit {
            if self.pending.len() < PENDING_CAP {
                self.pending.push(Pending {
                    at,
                    byte,
                    width,
                    epoch: e,
                    reader: me,
                    seq: (q, c),
                });
            }
        } else if let Some(first) = race {
            let block = self.block;
            self.report(Finding::SharedRace {
                block,
                byte,
                width,
                first,
                second: me,
                flight: false,
            });
        }
        uninit || race.is_some()
    }

    /// A write; true if it races (reported unless `o.quiet`).
    fn shared_write(&mut self, o: One) -> bool {
        let (at, tid, inst) = (o.at, o.tid, o.inst);
        let (t, e, q, c) = (tid + 1, self.epoch, self.seq(tid), self.order.stamp(tid));
        let s0 = *self.shadow(at);
        let other = self.write_conflict(&s0, tid);
        let s = self.shadow(at);
        (s.w, s.w_inst, s.w_epoch, s.w_seq, s.w_clk) = (t, inst, e, q, c);
        if o.quiet {
            return other.is_some();
        }
        if let Some(first) = other {
            let block = self.block;
            self.report(Finding::SharedRace {
                block,
                byte: o.byte,
                width: o.width,
                first,
                second: Access {
                    thread: tid,
                    inst,
                    write: true,
                },
                flight: false,
            });
        }
        other.is_some()
    }

    /// The earlier access of this epoch to shadow `s0` that a write by thread `tid` now is not
    /// ordered after, if any (a write before a read).
    fn write_conflict(&self, s0: &Word, tid: u32) -> Option<Access> {
        let (t, e) = (tid + 1, self.epoch);
        let after = |x: u32, seq: u32, clk: u32| x == t || self.ordered(x - 1, tid, (seq, clk));
        if s0.w_epoch == e && !after(s0.w, s0.w_seq, s0.w_clk) {
            return Some(Access {
                thread: s0.w - 1,
                inst: s0.w_inst,
                write: true,
            });
        }
        [(s0.r, s0.r_clk), (s0.r2, s0.r2_clk)]
            .into_iter()
            .find(|&(r, clk)| s0.r_epoch == e && r != 0 && !after(r, s0.r_seq, clk))
            .map(|(r, _)| Access {
                thread: r - 1,
                inst: s0.r_inst,
                write: false,
            })
    }

    /// `cp.async` `inst` of thread `tid` issued a copy into shared bytes `[at, at + n)`: the
    /// copy may write them from now on, so an access of this epoch it is not ordered after is a
    /// race (a stage refilled while other threads still read it), and the words are in flight
    /// until the copy lands (`inflight`).
    pub(super) fn async_issue(&mut self, at: usize, n: usize, tid: u32, inst: u32) {
        if !self.on {
            return;
        }
        let copy = Access {
            thread: tid,
            inst,
            write: true,
        };
        let words = self.shared.len();
        let mut told = false;
        for word in at / 4..(at + n).div_ceil(4).min(words) {
            let s = self.shared[word];
            let found = if s.split == 0 {
                self.write_conflict(&s, tid)
            } else {
                let first = s.split - 1;
                (first..first + 4).find_map(|b| self.write_conflict(&self.bytes[b as usize], tid))
            };
            let other = self.flight.issue(word, words, tid, inst);
            let first = found.or(other.map(|(thread, inst)| Access {
                thread,
                inst,
                write: true,
            }));
            if let (Some(first), false) = (first, told) {
                told = true;
                let block = self.block;
                self.report(Finding::SharedRace {
                    block,
                    byte: word as u32 * 4,
                    width: n as u32,
                    first,
                    second: copy,
                    flight: false,
                });
            }
        }
    }

    /// Bulk copy `inst` of thread `tid` wrote shared bytes `[lo, hi)`, counted on the phase
    /// `phase` of the mbarrier at shared byte `bar`: in flight until a wait on that phase orders
    /// an access after it (`inflight`).
    pub(super) fn bulk_load(&mut self, (lo, hi): (u32, u32), tid: u32, inst: u32, bar: (u32, u32)) {
        if self.on {
            self.flight.bulk_issue((lo, hi), tid, inst, bar);
        }
    }

    /// The lanes `lanes` of the warp whose first thread is `tid0` saw phase `phase` of the
    /// mbarrier at shared byte `bar` complete (a `try_wait` or `test_wait` true), after the
    /// wait's `__syncwarp()` count.
    pub(super) fn bulk_waited(&mut self, tid0: u32, lanes: u32, (bar, phase): (u32, u32)) {
        if !self.on || !self.flight.bulk_any() {
            return;
        }
        let seen = crate::inflight::Seen {
            warp: tid0 / 32,
            lanes,
            seq: self.seq(tid0),
            clk: self.order.stamp(tid0),
        };
        self.flight.bulk_seen(bar, phase, seen);
    }

    /// An access of shared bytes `[at, end)` while copies are in flight: true if it touches a
    /// word another thread's `cp.async` copy may still be writing, or a bulk copy's destination
    /// it is not ordered after (a race, reported with the copy first).
    #[inline(never)]
    fn in_flight(&mut self, at: usize, end: usize, tid: u32, inst: u32, kind: Acc) -> bool {
        let write = matches!(kind, Acc::Write | Acc::Atomic);
        let copy = self
            .flight
            .touch((at / 4, end.div_ceil(4)), tid, inst, write);
        let bulk = copy.is_none() && self.flight.bulk_any();
        let Some((thread, copy)) = copy.or_else(|| {
            bulk.then(|| {
                // Ordered after a wait: a lane that waited, a lane of its warp past a later
                // `__syncwarp()`, or a warp ordered after it (`order`).
                let (lane_seq, order) = (&self.lane_seq, &self.order);
                let after = |s: &crate::inflight::Seen| {
                    if s.warp == tid / 32 {
                        s.lanes >> (tid % 32) & 1 == 1
                            || lane_seq.get(tid as usize).is_some_and(|&q| q > s.seq)
                    } else {
                        order.before(s.warp * 32, s.clk, tid)
                    }
                };
                self.flight.bulk_touch((at as u32, end as u32), after)
            })?
        }) else {
            return false;
        };
        let block = self.block;
        self.report(Finding::SharedRace {
            block,
            byte: at as u32,
            width: (end - at) as u32,
            first: Access {
                thread,
                inst: copy,
                write: true,
            },
            second: Access {
                thread: tid,
                inst,
                write,
            },
            flight: true,
        });
        true
    }
}
