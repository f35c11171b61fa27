//! The teaching checks of global memory, a second `impl` block of [`Checks`]: one `Elem` of
//! shadow per 4-byte element of each buffer for the whole launch (who wrote it, and who read it
//! in output buffers), each access counted against the budgets (`budget`), writes into a
//! pitched output's padding (each a finding at once, with its writer), the destinations of bulk
//! stores still writing (an access before its thread's `wait_group` covers the store is a race,
//! its own thread's included), and after the launch the budgets read and the output elements
//! nobody wrote (padding aside: nobody should write it).

use crate::check::{ATOMIC, Checks};
use crate::finding::{Acc, Access, Finding};
use spec::job::Pitch;

impl Checks {
    /// A global access to buffer `buf` (0-based region) at byte `off` by block-linear `tid`.
    #[inline]
    pub fn global(&mut self, buf: usize, off: usize, tid: u32, inst: u32, kind: Acc) {
        if kind == Acc::Quiet {
            return;
        }
        let me = Access {
            thread: self.block * self.tpb + tid,
            inst,
            write: kind != Acc::Read,
        };
        let index = off / 4;
        if self.bulk.writing() && self.bulk_store_race(buf, index, tid, me, kind) {
            return;
        }
        if kind == Acc::Read {
            self.count_read(buf, me, index);
        }
        let over = self
            .budgets
            .per_thread
            .count(tid as usize, me.write, self.budget);
        if let Some(limit) = over {
            self.report(Finding::OverBudget {
                at: me,
                limit,
                buf,
                index,
            });
        }
        if me.write
            && let Some(p) = self.pitches.get(buf).copied().flatten()
            && p.is_padding(index)
        {
            let (row, col) = p.at(index);
            self.report(Finding::Padding {
                buf,
                index,
                row,
                col,
                at: me,
            });
        }
        self.global_shadow(buf, index, me, kind);
    }

    /// While a bulk store runs: its own writes recorded as its destination, or an access `me`
    /// (by block-linear `tid`) to an element a store still writes, a race reported; true then.
    #[inline(never)]
    fn bulk_store_race(
        &mut self,
        buf: usize,
        index: usize,
        tid: u32,
        me: Access,
        kind: Acc,
    ) -> bool {
        let at = (buf as u32, index as u32);
        let Some((t, i)) = self.bulk.global(at, kind == Acc::Write, tid, me.inst) else {
            return false;
        };
        // Read (or written) before the bulk store writing it is known complete.
        let first = Access {
            thread: self.block * self.tpb + t,
            inst: i,
            write: true,
        };
        self.report(Finding::GlobalRace {
            buf,
            index,
            first,
            second: me,
        });
        true
    }

    /// Access `me` of element `index` of `buf` against its shadow: another thread's write
    /// before it (or a read before a write) is a race, and a read of an output element nobody
    /// wrote yet is reported as such.
    #[inline(always)]
    fn global_shadow(&mut self, buf: usize, index: usize, me: Access, kind: Acc) {
        let inst = me.inst;
        let track = self.track_reads.get(buf).copied().unwrap_or(false);
        let Some(s) = self.globals.get_mut(buf).and_then(|v| v.get_mut(index)) else {
            return;
        };
        let g1 = me.thread + 1;
        let other = match kind {
            Acc::Read if !track => None,
            Acc::Read | Acc::Atomic if s.w == 0 && track => {
                let atomic = kind == Acc::Atomic;
                if atomic {
                    (s.w, s.w_inst) = (ATOMIC, inst);
                } else if s.r == 0 {
                    (s.r, s.r_inst) = (g1, inst);
                }
                self.report(Finding::ReadUnwritten {
                    buf,
                    index,
                    at: me,
                    atomic,
                });
                return;
            }
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
                index,
                first,
                second: me,
            });
        }
    }

    /// Marks buffer `buf` as a pitched output: its padding must not be written, and is not
    /// expected to be.
    pub fn set_pitch(&mut self, buf: usize, pitch: Pitch) {
        if let Some(p) = self.pitches.get_mut(buf) {
            *p = Some(pitch);
        }
    }

    /// A global read by `me` of element `index` of `buf`, for the budgets that count one
    /// buffer's reads.
    #[inline]
    fn count_read(&mut self, buf: usize, me: Access, index: usize) {
        let b = &mut self.budgets;
        if buf == b.staged.buf {
            b.staged.read(me.inst);
        }
        if buf == b.tile.buf {
            b.tile.read(me, index);
        }
        if buf == b.tile.unread_buf {
            let f = b.tile.unread(me, buf, index);
            self.report(f);
        }
    }

    /// The elements of the output buffers, a pitched one's padding left out.
    fn output_elems(&self, outputs: &[usize]) -> u64 {
        let elems = |b: usize| match self.pitches.get(b).copied().flatten() {
            Some(p) => (p.rows * p.cols) as u64,
            None => self.globals.get(b).map_or(0, |e| e.len() as u64),
        };
        outputs.iter().map(|&b| elems(b)).sum()
    }

    /// After the launch: the budgets of the whole launch, and the output buffers with elements
    /// nobody wrote (`outputs`: region indices).
    pub fn finish(&mut self, outputs: &[usize], threads: u64) {
        if !self.on {
            return;
        }
        let elems = self.output_elems(outputs);
        for f in self
            .budgets
            .launch_findings(self.budget, elems, &mut self.stats)
        {
            self.report(f);
        }
        self.unwritten(outputs, threads);
        // A kernel that left outputs unwritten (a skeleton) has a first thing to fix.
        let unwritten = self
            .kept
            .iter()
            .any(|k| matches!(k.finding, Finding::Unwritten { .. }));
        let tensor = self
            .budgets
            .tensor_finding(self.budget, elems, unwritten, &mut self.stats);
        if let Some(f) = tensor {
            self.report(f);
        }
    }

    /// After the launch: the output buffers (`outputs`: region indices) with elements nobody
    /// wrote, each a finding, with the thread that should have written the first by the pattern
    /// of the other writes (`threads`: the launch's).
    fn unwritten(&mut self, outputs: &[usize], threads: u64) {
        for &buf in outputs {
            let Some(elems) = self.globals.get(buf) else {
                continue;
            };
            let pitch = self.pitches.get(buf).copied().flatten();
            let padding = |i: usize| pitch.is_some_and(|p| p.is_padding(i));
            let unwritten: Vec<usize> = (0..elems.len())
                .filter(|&i| elems[i].w == 0 && !padding(i))
                .collect();
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
                len: (0..elems.len()).filter(|&i| !padding(i)).count(),
                first,
                owner,
                store,
                short,
            };
            self.report(f);
        }
    }
}
