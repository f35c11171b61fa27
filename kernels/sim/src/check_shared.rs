//! The teaching checks of shared memory, a second `impl` block of [`Checks`]: one access checked
//! against its words' shadows (a race, a read of a word nobody wrote, ordered or not by a
//! `__syncwarp()`), the shared sources of bulk stores still being read, and `cp.async` and bulk
//! copies in flight (`inflight`). `check` holds the shadow state and the block's epochs.

use crate::check::{Acc, BulkRead, Checks, One, PENDING_CAP, Shadow, Word};
use crate::finding::{Access, Finding};

impl Checks {
    /// Bulk store `inst` of thread `tid` reads shared bytes `[lo, hi)` until its group is
    /// waited for (`bulk`): the thread's open group.
    pub(super) fn bulk_read(&mut self, lo: u32, hi: u32, tid: u32, inst: u32) {
        self.bulk_reads.push(BulkRead {
            lo,
            hi,
            tid,
            inst,
            group: 0,
        });
    }

    /// `cp.async.bulk.commit_group` by thread `tid`: its open group is committed.
    pub(super) fn bulk_commit(&mut self, tid: u32) {
        let Some(n) = self.bulk_groups.get_mut(tid as usize) else {
            return;
        };
        *n += 1;
        let n = *n;
        for r in self
            .bulk_reads
            .iter_mut()
            .filter(|r| r.tid == tid && r.group == 0)
        {
            r.group = n;
        }
        for w in self.bulk_writes.values_mut() {
            if w.0 == tid && w.2 == 0 {
                w.2 = n;
            }
        }
    }

    /// `cp.async.bulk.wait_group{.read} keep` by thread `tid`: its committed groups but the
    /// `keep` latest are done reading, and done writing too without `.read`.
    pub(super) fn bulk_wait(&mut self, tid: u32, keep: u32, read: bool) {
        let n = self.bulk_groups.get(tid as usize).copied().unwrap_or(0);
        let done = |t: u32, group: u32| t == tid && group != 0 && group + keep <= n;
        self.bulk_reads.retain(|r| !done(r.tid, r.group));
        if !read && !self.bulk_writes.is_empty() {
            self.bulk_writes.retain(|_, w| !done(w.0, w.2));
        }
    }

    /// A write of shared bytes `[lo, hi)` by thread `tid` at `inst` into the source of a bulk
    /// store still being read: a race with the store (reported once per store).
    fn bulk_overwrite(&mut self, lo: u32, hi: u32, tid: u32, inst: u32) {
        let Some(i) = self.bulk_reads.iter().position(|r| lo < r.hi && r.lo < hi) else {
            return;
        };
        let r = self.bulk_reads.swap_remove(i);
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
        if self.count_shared && kind == Acc::Read {
            self.shared_reads += 1;
            self.shared_inst = inst;
        }
        if self.flight.any() && kind != Acc::Quiet && self.in_flight(at, end, tid, inst, kind) {
            return;
        }
        if !self.bulk_reads.is_empty() && matches!(kind, Acc::Write | Acc::Atomic) {
            self.bulk_overwrite(at as u32, end as u32, tid, inst);
        }
        if !self.mbar_bytes.is_empty() && kind != Acc::Quiet && self.mbar_touch.is_none() {
            let (lo, hi) = (at as u32, end as u32);
            if self.mbar_bytes.iter().any(|&(a, b)| lo < b && a < hi) {
                self.mbar_touch = Some((inst, tid, kind != Acc::Read));
            }
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
                self.pending.push((at, (byte, width), e, me, (q, c)));
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
