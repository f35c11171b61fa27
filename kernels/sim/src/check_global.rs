//! The teaching checks of global memory, a second `impl` block of [`Checks`]: one [`Elem`] of
//! shadow per 4-byte element of each buffer for the whole launch (who wrote it, and who read it
//! in output buffers), the per-thread counts of global reads and writes held to the job's budget,
//! writes into a pitched output's padding (each a finding at once, with its writer), the
//! destinations of bulk stores still writing (an access before its thread's `wait_group` covers
//! the store is a race, its own thread's included), and after the launch the output elements
//! nobody wrote (padding aside: nobody should write it).

use crate::check::{ATOMIC, Checks};
use crate::finding::{Acc, Access, Finding};
use ptx::ir::Op;
use ptx::ir::{Bin, Tern, Ty};
use ptx::ir::{HalfOp, MmaOp};
use spec::job::Pitch;

/// The products one lane of `op` makes on the CUDA cores: 1 for a multiply or multiply-add of
/// any floating-point precision (`mul`, `fma`, `mad`; f16, bf16, f32, f64), 2 for a packed pair;
/// `None` for anything else (an add is no product: a tf32 split's subtract or an epilogue's sum).
pub(super) fn cuda_core_products(op: &Op) -> Option<u32> {
    let float = |ty: Ty| matches!(ty, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64);
    let n = |ty: Ty| if ty == Ty::F16x2 { 2 } else { 1 };
    match op {
        Op::Bin {
            op: Bin::MulLo, ty, ..
        }
        | Op::Tern {
            op: Tern::Fma, ty, ..
        } if float(*ty) || *ty == Ty::F16x2 => Some(n(*ty)),
        Op::Mma(m) => match **m {
            MmaOp::Half {
                op: HalfOp::Mul | HalfOp::Fma,
                x2,
                ..
            } => Some(if x2 { 2 } else { 1 }),
            _ => None,
        },
        _ => None,
    }
}

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
                if buf == self.tile_buf {
                    self.tile_reads += 1;
                    if self.tile_reads == self.tile_allowed + 1 {
                        self.tile_over = Some((me, off / 4));
                    }
                }
                if buf == self.unread_buf {
                    self.unread_reads += 1;
                    self.report(Finding::OverBudget {
                        at: me,
                        limit: 0,
                        buf,
                        index: off / 4,
                    });
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

    /// Lanes `exec` each made `products` products on the CUDA cores at `inst`.
    #[inline]
    pub(super) fn products(&mut self, inst: usize, exec: u32, products: u32) {
        self.products += u64::from(exec.count_ones()) * u64::from(products);
        self.product_inst = inst as u32;
    }

    /// A warp's tensor-core instruction did `macs` multiply-adds.
    #[inline]
    pub(super) fn tensor(&mut self, macs: u64) {
        self.tensor_macs += macs;
    }

    /// At the end of a block: its reads of the tiled buffer against its tile.
    pub(super) fn end_tile(&mut self) {
        let Some(t) = self.budget.and_then(|b| b.tile_reads) else {
            return;
        };
        let most = self.stats.tile_reads.map_or(0, |(m, _)| m);
        self.stats.tile_reads = Some((most.max(self.tile_reads), u64::from(t.tile)));
        if let Some((first, index)) = self.tile_over.take() {
            let block = self.block;
            self.report(Finding::TileOverBudget {
                block,
                buf: t.buf as usize,
                reads: self.tile_reads,
                tile: u64::from(t.tile),
                allowed: self.tile_allowed,
                first,
                index,
            });
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
        if let Some(b) = self.budget
            && let Some(limit) = b.cuda_products_per_output
        {
            let outputs = match b.outputs {
                0 => self.output_elems(outputs),
                n => n,
            };
            let per_output = self.products.div_ceil(outputs.max(1)) as u32;
            self.stats.cuda_products_per_output = Some(per_output);
            if per_output > limit {
                let (products, inst) = (self.products, self.product_inst);
                self.report(Finding::ProductsOverBudget {
                    per_output,
                    limit,
                    products,
                    outputs,
                    inst,
                });
            }
        }
        if let Some((reads, products)) = self.budget.and_then(|b| b.shared_reads_per_product) {
            let made = (self.shared_reads, self.products);
            self.stats.shared_reads_products = Some(made);
            if made.0 * u64::from(products) > made.1 * u64::from(reads) {
                let inst = self.shared_inst;
                self.report(Finding::SharedOverBudget {
                    made,
                    limit: (reads, products),
                    inst,
                });
            }
        }
        if let Some((buf, num, den)) = self.budget.and_then(|b| b.staged_reads) {
            let region = self
                .budget
                .map(|b| b.staged_region)
                .filter(|&r| r != 0)
                .unwrap_or(self.staged_words);
            let allowed = region * u64::from(num) / u64::from(den.max(1));
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
        if self.unread_buf != usize::MAX {
            self.stats.unread_reads = Some(self.unread_reads);
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
        if let Some(b) = self.budget.filter(|b| b.tensor_macs != 0) {
            // All but what the CUDA cores may do (a K remainder) belongs on the tensor cores.
            let outputs = match b.outputs {
                0 => self.output_elems(outputs),
                n => n,
            };
            let cuda = u64::from(b.cuda_products_per_output.unwrap_or(0)) * outputs;
            let (done, needed) = (self.tensor_macs, b.tensor_macs);
            self.stats.tensor_macs = Some((done, needed));
            let over = self.stats.cuda_products_per_output.unwrap_or(0)
                > b.cuda_products_per_output.unwrap_or(u32::MAX);
            // A kernel over the products budget has been told where its products belong, and one
            // that left outputs unwritten (a skeleton) has a first thing to fix.
            let unwritten = self
                .kept
                .iter()
                .any(|k| matches!(k.finding, Finding::Unwritten { .. }));
            if done < needed.saturating_sub(cuda) && !over && !unwritten {
                self.report(Finding::TensorShort { done, needed, cuda });
            }
        }
    }
}
