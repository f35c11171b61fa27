//! The teaching checks of global memory, a second `impl` block of [`Checks`]: one [`Elem`] of
//! shadow per 4-byte element of each buffer for the whole launch (who wrote it, and who read it
//! in output buffers), the per-thread counts of global reads and writes held to the job's budget,
//! writes into a pitched output's padding (each a finding at once, with its writer), the
//! destinations of bulk stores still writing (an access before its thread's `wait_group` covers
//! the store is a race, its own thread's included), and after the launch the output elements
//! nobody wrote (padding aside: nobody should write it).

use crate::check::{ATOMIC, Checks};
use crate::finding::{Acc, Access, Finding};
use spec::job::Pitch;

impl Checks {
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
        if kind != Acc::Quiet && (!self.bulk_writes.is_empty() || self.bulk_storing) {
            let at = (buf as u32, (off / 4) as u32);
            if self.bulk_storing && kind == Acc::Write {
                self.bulk_writes.insert(at, (tid, inst, 0));
            } else if let Some(&(t, i, _)) = self.bulk_writes.get(&at) {
                // Read (or written) before the bulk store writing it is known complete.
                let first = Access {
                    thread: self.block * self.tpb + t,
                    inst: i,
                    write: true,
                };
                let (buf, index) = (buf, off / 4);
                self.report(Finding::GlobalRace {
                    buf,
                    index,
                    first,
                    second: me,
                });
                return;
            }
        }
        let (count, limit) = match kind {
            Acc::Read => {
                if buf == self.staged_buf {
                    self.staged_reads += 1;
                    self.staged_inst = inst;
                }
                self.reads[t] += 1;
                (self.reads[t], self.budget.map(|b| b.reads))
            }
            Acc::Write | Acc::Atomic => {
                self.writes[t] += 1;
                (self.writes[t], self.budget.map(|b| b.writes))
            }
            Acc::Quiet => return,
        };
        if let Some(limit) = limit.filter(|&l| count == l.saturating_add(1)) {
            self.report(Finding::OverBudget {
                at: me,
                limit,
                buf,
                index: off / 4,
            });
        }
        if me.write
            && let Some(p) = self.pitches.get(buf).copied().flatten()
            && p.is_padding(off / 4)
        {
            let (row, col) = p.at(off / 4);
            self.report(Finding::Padding {
                buf,
                index: off / 4,
                row,
                col,
                at: me,
            });
        }
        let track = self.track_reads.get(buf).copied().unwrap_or(false);
        let Some(s) = self.globals.get_mut(buf).and_then(|v| v.get_mut(off / 4)) else {
            return;
        };
        let g1 = g + 1;
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
                    index: off / 4,
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
                index: off / 4,
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

    /// After the launch: output buffers with elements nobody wrote (`outputs`: region indices).
    /// Lanes `exec` executed the multiply-add on the FP32 units at `inst`.
    #[inline]
    pub(super) fn fma(&mut self, inst: usize, exec: u32) {
        self.fp32_fmas += u64::from(exec.count_ones());
        self.fma_inst = inst as u32;
    }

    /// The elements of the output buffers, a pitched one's padding left out.
    fn output_elems(&self, outputs: &[usize]) -> u64 {
        let elems = |b: usize| match self.pitches.get(b).copied().flatten() {
            Some(p) => (p.rows * p.cols) as u64,
            None => self.globals.get(b).map_or(0, |e| e.len() as u64),
        };
        outputs.iter().map(|&b| elems(b)).sum()
    }

    pub fn finish(&mut self, outputs: &[usize], threads: u64) {
        if !self.on {
            return;
        }
        if let Some(b) = self.budget
            && let Some(limit) = b.fp32_fma_per_output
        {
            let elems: u64 = match b.outputs {
                0 => outputs
                    .iter()
                    .filter_map(|&b| self.globals.get(b))
                    .map(|e| e.len() as u64)
                    .sum(),
                n => n,
            };
            let per_output = self.fp32_fmas.div_ceil(elems.max(1)) as u32;
            self.stats.fp32_fma_per_output = Some(per_output);
            if per_output > limit {
                let inst = self.fma_inst;
                self.report(Finding::FmaOverBudget {
                    per_output,
                    limit,
                    inst,
                });
            }
        }
        if let Some((reads, fmas)) = self.budget.and_then(|b| b.shared_reads_per_fma) {
            let made = (self.shared_reads, self.fp32_fmas);
            self.stats.shared_reads_fmas = Some(made);
            if made.0 * u64::from(fmas) > made.1 * u64::from(reads) {
                let inst = self.shared_inst;
                self.report(Finding::SharedOverBudget {
                    made,
                    limit: (reads, fmas),
                    inst,
                });
            }
        }
        if let Some((buf, num, den)) = self.budget.and_then(|b| b.staged_reads) {
            let allowed = self.staged_words * u64::from(num) / u64::from(den.max(1));
            let outs = self.output_elems(outputs);
            self.stats.staged_reads = Some((self.staged_reads, allowed, outs));
            if self.staged_reads > allowed {
                let inst = self.staged_inst;
                self.report(Finding::StagedOverBudget {
                    buf: buf as usize,
                    reads: self.staged_reads,
                    allowed,
                    outputs: outs,
                    inst,
                });
            }
        }
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
