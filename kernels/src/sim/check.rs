//! The teaching checks: shadow state beside the memory, and what it found.
//!
//! Shared memory has one [`Word`] of shadow per 4 bytes, reset for each block: who last wrote it,
//! at which instruction and in which barrier epoch (the epoch grows at every released
//! `bar.sync`), and who read it in the current epoch. Two different threads touching one word in
//! the same epoch, one of them writing, is a race, whatever warp they are in: code that relies on
//! lockstep counts too. A read of a word no thread of the block has written yet is held until the
//! epoch ends: if another thread writes it later in the same epoch the race is the diagnosis,
//! otherwise it is an uninitialized read. Global buffers have one [`Elem`] per 4-byte element for
//! the whole launch (writers everywhere, readers in output buffers only), and per-thread counts of
//! global reads and writes held to the job's budget. Atomics never race with each other. What the
//! checks find are [`Finding`] values, capped per kind; `report` turns them into diagnostics.

pub use super::finding::Acc;
use super::finding::{Access, Finding, Kept};
use super::ir::Program;
use crate::job::{AccessStats, Budget};

/// Distinct findings kept per kind (a finding is distinct by its kind and instructions).
pub const CAP: usize = 3;
/// Reads of never-written shared words waiting for their epoch to end.
const PENDING_CAP: usize = 4096;
const ATOMIC: u32 = u32::MAX;

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
}

/// Shadow of one global 4-byte element. Thread fields hold the launch-linear id plus one.
#[derive(Clone, Copy, Default)]
struct Elem {
    w: u32,
    w_inst: u32,
    r: u32,
    r2: u32,
    r_inst: u32,
}

/// The checks of one launch.
pub struct Checks {
    pub on: bool,
    /// The learner's line of each instruction.
    lines: Vec<u32>,
    budget: Option<Budget>,
    tpb: u32,
    block: u32,
    epoch: u32,
    shared: Vec<Word>,
    pending: Vec<(u32, u32, Access)>,
    globals: Vec<Vec<Elem>>,
    track_reads: Vec<bool>,
    reads: Vec<u32>,
    writes: Vec<u32>,
    pub stats: AccessStats,
    pub kept: Vec<Kept>,
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
            pending: vec![],
            globals,
            track_reads: outputs.to_vec(),
            reads: vec![0; tpb as usize],
            writes: vec![0; tpb as usize],
            stats: AccessStats::default(),
            kept: vec![],
        }
    }

    fn report(&mut self, f: Finding) {
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
        self.shared.clear();
        self.shared
            .resize(shared_bytes.div_ceil(4), Word::default());
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
        for (word, epoch, reader) in pending {
            let s = self.shared[word as usize];
            if s.w_epoch == epoch && s.w != reader.thread + 1 {
                continue; // reported as a race when the other thread wrote it
            }
            let block = self.block;
            self.report(Finding::Uninit {
                block,
                byte: word * 4,
                reader,
            });
        }
    }

    /// A shared access of `n` bytes at byte `at` by block-linear thread `tid`.
    #[inline]
    pub fn shared(&mut self, at: usize, n: usize, tid: u32, inst: u32, kind: Acc) {
        for word in at / 4..=(at + n.max(1) - 1) / 4 {
            match kind {
                Acc::Read => self.shared_read(word, tid, inst),
                Acc::Write => self.shared_write(word, tid, inst),
                Acc::Atomic => {
                    let e = self.epoch;
                    if let Some(s) = self.shared.get_mut(word)
                        && (s.w == 0 || s.w_epoch != e)
                    {
                        (s.w, s.w_inst, s.w_epoch) = (tid + 1, inst, e);
                    }
                }
                Acc::Quiet => {}
            }
        }
    }

    fn shared_read(&mut self, word: usize, tid: u32, inst: u32) {
        let (t, e) = (tid + 1, self.epoch);
        let Some(s) = self.shared.get_mut(word) else {
            return;
        };
        let me = Access {
            thread: tid,
            inst,
            write: false,
        };
        let race = (s.w_epoch == e && s.w != t).then(|| Access {
            thread: s.w - 1,
            inst: s.w_inst,
            write: true,
        });
        let uninit = s.w == 0;
        if s.r_epoch != e {
            (s.r_epoch, s.r, s.r2, s.r_inst) = (e, t, 0, inst);
        } else if s.r != t && s.r2 == 0 {
            s.r2 = t;
        }
        if uninit {
            if self.pending.len() < PENDING_CAP {
                self.pending.push((word as u32, e, me));
            }
        } else if let Some(first) = race {
            let block = self.block;
            self.report(Finding::SharedRace {
                block,
                byte: word as u32 * 4,
                first,
                second: me,
            });
        }
    }

    fn shared_write(&mut self, word: usize, tid: u32, inst: u32) {
        let (t, e) = (tid + 1, self.epoch);
        let Some(s) = self.shared.get_mut(word) else {
            return;
        };
        let other = if s.w_epoch == e && s.w != t {
            Some(Access {
                thread: s.w - 1,
                inst: s.w_inst,
                write: true,
            })
        } else if s.r_epoch == e && (s.r != t || s.r2 != 0) {
            let r = if s.r != t { s.r } else { s.r2 };
            Some(Access {
                thread: r - 1,
                inst: s.r_inst,
                write: false,
            })
        } else {
            None
        };
        (s.w, s.w_inst, s.w_epoch) = (t, inst, e);
        if let Some(first) = other {
            let block = self.block;
            self.report(Finding::SharedRace {
                block,
                byte: word as u32 * 4,
                first,
                second: Access {
                    thread: tid,
                    inst,
                    write: true,
                },
            });
        }
    }

    /// A global access to buffer `buf` (0-based region) at byte `off` by block-linear `tid`.
    #[inline]
    pub fn global(&mut self, buf: usize, off: usize, tid: u32, inst: u32, kind: Acc) {
        let g = self.block * self.tpb + tid;
        let me = Access {
            thread: g,
            inst,
            write: kind != Acc::Read,
        };
        let t = tid as usize;
        let (count, limit) = match kind {
            Acc::Read => {
                self.reads[t] += 1;
                (self.reads[t], self.budget.map(|b| b.reads))
            }
            Acc::Write | Acc::Atomic => {
                self.writes[t] += 1;
                (self.writes[t], self.budget.map(|b| b.writes))
            }
            Acc::Quiet => return,
        };
        if let Some(limit) = limit.filter(|&l| count == l + 1) {
            self.report(Finding::OverBudget { at: me, limit });
        }
        let track = self.track_reads.get(buf).copied().unwrap_or(false);
        let Some(s) = self.globals.get_mut(buf).and_then(|v| v.get_mut(off / 4)) else {
            return;
        };
        let g1 = g + 1;
        let other = match kind {
            Acc::Read if !track => None,
            Acc::Read => {
                let race = (s.w != 0 && s.w != ATOMIC && s.w != g1).then(|| Access {
                    thread: s.w - 1,
                    inst: s.w_inst,
                    write: true,
                });
                if s.r == 0 {
                    (s.r, s.r_inst) = (g1, inst);
                } else if s.r != g1 && s.r2 == 0 {
                    s.r2 = g1;
                }
                race
            }
            Acc::Write => {
                let other = if s.w != 0 && s.w != ATOMIC && s.w != g1 {
                    Some(Access {
                        thread: s.w - 1,
                        inst: s.w_inst,
                        write: true,
                    })
                } else if s.r != 0 && (s.r != g1 || s.r2 != 0) {
                    let r = if s.r != g1 { s.r } else { s.r2 };
                    Some(Access {
                        thread: r - 1,
                        inst: s.r_inst,
                        write: false,
                    })
                } else {
                    None
                };
                (s.w, s.w_inst) = (g1, inst);
                other
            }
            _ => {
                (s.w, s.w_inst) = (ATOMIC, inst);
                None
            }
        };
        if let Some(first) = other {
            self.report(Finding::GlobalRace {
                buf,
                index: off / 4,
                first,
                second: me,
            });
        }
    }

    /// After the launch: output buffers with elements nobody wrote (`outputs`: region indices).
    pub fn finish(&mut self, outputs: &[usize], threads: u64) {
        if !self.on {
            return;
        }
        for &buf in outputs {
            let Some(elems) = self.globals.get(buf) else {
                continue;
            };
            let unwritten: Vec<usize> = (0..elems.len()).filter(|&i| elems[i].w == 0).collect();
            let Some(&first) = unwritten.first() else {
                continue;
            };
            // One thread per element at a fixed offset: the owner follows from the pattern.
            let mut offsets = elems
                .iter()
                .enumerate()
                .filter(|(_, e)| e.w != 0 && e.w != ATOMIC)
                .map(|(i, e)| i64::from(e.w - 1) - i as i64);
            let pattern = offsets
                .next()
                .filter(|&d| offsets.all(|x| x == d))
                .map(|d| first as i64 + d);
            let owner = pattern
                .filter(|&g| g >= 0 && (g as u64) < threads)
                .map(|g| g as u32);
            let short = pattern.filter(|&g| g as u64 >= threads).map(|_| threads);
            let store = elems
                .iter()
                .enumerate()
                .filter(|(_, e)| e.w != 0)
                .min_by_key(|(i, _)| i.abs_diff(first))
                .map(|(_, e)| e.w_inst);
            let f = Finding::Unwritten {
                buf,
                count: unwritten.len(),
                len: elems.len(),
                first,
                owner,
                store,
                short,
            };
            self.report(f);
        }
    }
}
