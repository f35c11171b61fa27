//! The teaching checks of shared memory: shadow state beside the memory, and what it found.
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
//! without such an order the race is the diagnosis, otherwise it is an uninitialized read. Global
//! memory and the budget are in `check_global`. Atomics never race with each other. What the
//! checks find are [`Finding`] values, capped per kind; `report` turns them into diagnostics.

pub use crate::finding::Acc;
use crate::finding::{Access, Finding, Kept};
use ptx::ir::Program;
use spec::job::{AccessStats, Budget, Pitch};

/// Distinct findings kept per kind (a finding is distinct by its kind and instructions).
pub const CAP: usize = 3;
/// Reads of never-written shared words waiting for their epoch to end.
const PENDING_CAP: usize = 4096;
pub(super) const ATOMIC: u32 = u32::MAX;

/// Shadow of one shared 4-byte word. Thread fields hold the block-linear id plus one (0: none).
#[derive(Clone, Copy, Default)]
struct Word {
    w: u32,
    w_inst: u32,
    w_epoch: u32,
    r: u32,
    r2: u32,
    r_inst: u32,
    r_epoch: u32,
    /// The writer's (the latest reader's) warp `__syncwarp()` count at the access.
    w_seq: u32,
    r_seq: u32,
    /// The writer's and the two readers' warp clock stamps (`order`).
    w_clk: u32,
    r_clk: u32,
    r2_clk: u32,
    /// 0, or 1 + the index in `Checks::bytes` of this word's four byte shadows, once an
    /// access touched part of it.
    split: u32,
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
enum Shadow {
    Word(u32),
    Byte(u32),
}

/// A read of never-written shared memory held until its epoch ends: shadow, (byte, width),
/// epoch, reader, and the reader's `__syncwarp()` count and clock stamp.
type Pending = (Shadow, (u32, u32), u32, Access, (u32, u32));

/// One access as one shadow sees it: the shadow, its first byte, the access's width in bytes
/// (findings index the array by it), the thread and instruction, and whether a finding is
/// already told for this access (`quiet`: found, not reported again).
#[derive(Clone, Copy)]
struct One {
    at: Shadow,
    byte: u32,
    width: u32,
    tid: u32,
    inst: u32,
    quiet: bool,
}

/// The checks of one launch.
pub struct Checks {
    pub on: bool,
    /// The learner's line of each instruction.
    pub(super) lines: Vec<u32>,
    pub(super) budget: Option<Budget>,
    pub(super) tpb: u32,
    pub(super) block: u32,
    epoch: u32,
    shared: Vec<Word>,
    /// The byte shadows of split words, four per word.
    bytes: Vec<Word>,
    pending: Vec<Pending>,
    /// `__syncwarp()`s executed per warp of the block, and the latest each thread executed.
    warp_seq: Vec<u32>,
    lane_seq: Vec<u32>,
    /// Happens-before through named barriers and `mbarrier` phases.
    pub(super) order: crate::order::Order,
    /// The shared bytes `[lo, hi)` of initialized `mbarrier` objects, and the first ordinary
    /// access to one (instruction, thread, write), which `exec` turns into a diagnostic.
    pub(super) mbar_bytes: Vec<(u32, u32)>,
    pub(super) mbar_touch: Option<(u32, u32, bool)>,
    /// The shared sources of bulk stores still being read (`bulk`), and each thread's count of
    /// committed bulk groups.
    bulk_reads: Vec<BulkRead>,
    bulk_groups: Vec<u32>,
    /// The shared words under `cp.async` copies in flight (`inflight`).
    flight: crate::inflight::InFlight,
    pub(super) globals: Vec<Vec<Elem>>,
    pub(super) track_reads: Vec<bool>,
    /// Per buffer, its shape when it is a pitched output (writes into its padding are findings).
    pub(super) pitches: Vec<Option<Pitch>>,
    pub(super) reads: Vec<u32>,
    pub(super) writes: Vec<u32>,
    /// Whether the budget limits multiply-adds on the FP32 units, how many lanes executed one
    /// (`fma.f32`), and the latest such instruction (`check_global::Checks::fma`).
    pub(super) count_fma: bool,
    pub(super) fp32_fmas: u64,
    pub(super) fma_inst: u32,
    /// Whether the budget limits shared reads per multiply-add (puzzle 06), how many lanes
    /// read shared memory, and the latest such read (`check_global::Checks::finish`).
    pub(super) count_shared: bool,
    pub(super) shared_reads: u64,
    pub(super) shared_inst: u32,
    /// The buffer whose reads the budget limits (puzzle 10's input; `usize::MAX`: none), its
    /// reads, the latest, and the floats of dynamic shared memory of the blocks run so far.
    pub(super) staged_buf: usize,
    pub(super) staged_reads: u64,
    pub(super) staged_inst: u32,
    pub(super) staged_words: u64,
    pub stats: AccessStats,
    pub kept: Vec<Kept>,
}

/// The shared source `[lo, hi)` of a bulk store by thread `tid` at `inst`, in its bulk group
/// `group` (0: not committed yet).
#[derive(Clone, Copy)]
struct BulkRead {
    lo: u32,
    hi: u32,
    tid: u32,
    inst: u32,
    group: u32,
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
            mbar_bytes: vec![],
            mbar_touch: None,
            bulk_reads: vec![],
            bulk_groups: vec![0; tpb as usize],
            flight: Default::default(),
            globals,
            track_reads: outputs.to_vec(),
            pitches: vec![None; lens.len()],
            reads: vec![0; tpb as usize],
            writes: vec![0; tpb as usize],
            count_fma: on
                && budget.is_some_and(|b| {
                    b.fp32_fma_per_output.is_some() || b.shared_reads_per_fma.is_some()
                }),
            fp32_fmas: 0,
            fma_inst: 0,
            count_shared: on && budget.is_some_and(|b| b.shared_reads_per_fma.is_some()),
            shared_reads: 0,
            shared_inst: 0,
            staged_buf: match budget.and_then(|b| b.staged_reads) {
                Some((buf, _, _)) if on => buf as usize,
                _ => usize::MAX,
            },
            staged_reads: 0,
            staged_inst: 0,
            staged_words: 0,
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
        self.staged_words += (shared_bytes / 4) as u64;
        self.shared.clear();
        self.shared
            .resize(shared_bytes.div_ceil(4), Word::default());
        self.bytes.clear();
        self.warp_seq.iter_mut().for_each(|s| *s = 0);
        self.lane_seq.iter_mut().for_each(|s| *s = 0);
        self.order.reset(self.tpb.div_ceil(32) as usize);
        self.mbar_bytes.clear();
        self.mbar_touch = None;
        self.bulk_reads.clear();
        self.bulk_groups.iter_mut().for_each(|g| *g = 0);
        self.flight.reset();
        self.reads.iter_mut().for_each(|r| *r = 0);
        self.writes.iter_mut().for_each(|w| *w = 0);
    }

    /// A barrier released every thread of the block: a new epoch.
    pub fn barrier(&mut self) {
        if self.on {
            self.flush();
            self.epoch += 1;
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
    fn seq(&self, tid: u32) -> u32 {
        self.warp_seq.get(tid as usize / 32).copied().unwrap_or(0)
    }

    /// Whether an access by thread `a` when its warp's count was `seq` and its clock stamp
    /// `clk` happens before any later access by thread `b` in the same epoch: both of one warp
    /// and both past a later `__syncwarp()`, or ordered by a named barrier or an `mbarrier`
    /// phase between their warps (`order`).
    #[inline]
    fn ordered(&self, a: u32, b: u32, (seq, clk): (u32, u32)) -> bool {
        let passed = |t: u32| self.lane_seq.get(t as usize).is_some_and(|&s| s > seq);
        a / 32 == b / 32 && passed(a) && passed(b) || self.order.before(a, clk, b)
    }

    pub fn end_block(&mut self) {
        if !self.on {
            return;
        }
        self.flush();
        let (r, w) = (
            self.reads.iter().copied().max().unwrap_or(0),
            self.writes.iter().copied().max().unwrap_or(0),
        );
        self.stats.max_reads = self.stats.max_reads.max(r);
        self.stats.max_writes = self.stats.max_writes.max(w);
    }

    /// Reports the held reads of never-written words that no other thread wrote in their epoch.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for (at, (byte, width), epoch, reader, seq) in pending {
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

    fn shadow(&mut self, at: Shadow) -> &mut Word {
        match at {
            Shadow::Word(w) => &mut self.shared[w as usize],
            Shadow::Byte(b) => &mut self.bytes[b as usize],
        }
    }

    /// The index of the first byte shadow of `word`, splitting it (each byte starting with the
    /// word's history, which a whole-word access made for all four bytes).
    fn split(&mut self, word: usize) -> u32 {
        let s = self.shared[word];
        if s.split != 0 {
            return s.split - 1;
        }
        let first = self.bytes.len() as u32;
        self.bytes.extend([s; 4]);
        self.shared[word].split = first + 1;
        first
    }

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
    }

    /// `cp.async.bulk.wait_group{.read} keep` by thread `tid`: its committed groups but the
    /// `keep` latest are done reading.
    pub(super) fn bulk_wait(&mut self, tid: u32, keep: u32) {
        let n = self.bulk_groups.get(tid as usize).copied().unwrap_or(0);
        self.bulk_reads
            .retain(|r| r.tid != tid || r.group == 0 || r.group + keep > n);
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

    /// An access of shared bytes `[at, end)` while copies are in flight: true if it touches a
    /// word another thread's copy may still be writing (a race, reported with the copy first).
    #[inline(never)]
    fn in_flight(&mut self, at: usize, end: usize, tid: u32, inst: u32, kind: Acc) -> bool {
        let write = matches!(kind, Acc::Write | Acc::Atomic);
        let Some((thread, copy)) = self
            .flight
            .touch((at / 4, end.div_ceil(4)), tid, inst, write)
        else {
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
