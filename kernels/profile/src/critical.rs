//! Each sampled warp's critical path, for `runner profile`'s latency bound: the clocks a warp
//! would take if it ran alone on its scheduler, following its registers through the instructions
//! it issues (`ptx::ir::Inst::operands`).
//!
//! An instruction issues one clock after the warp's previous one (as many more as `ptxas` spells
//! it in, `ptx::ir::Op::sass_extra`) and no earlier than the registers and predicates it reads are ready.
//! What it writes is ready after its latency (`Latencies`, from `Gpu`): the arithmetic's
//! dependent-issue latency (a division's SASS sequence counted as a chain of as many), a shared
//! load's, and a global load's by where its lines are: an L1 hit where the warp itself touched
//! every line of the request before, else a miss, timed twice, at the L2 hit latency and at DRAM's
//! (the profile mixes the two by the share of misses the DRAM bound implies). A `cp.async` lands
//! with its group, which `cp.async.wait_group` waits for; a `__syncthreads()` releases every warp
//! of the block at the latest one's clock. A block's path is its longest warp's.

use ptx::ir::{Op, Operands, Program, Space};
use std::collections::HashSet;

/// Clocks from an instruction's issue to its result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latencies {
    pub arith: f64,
    pub shared: f64,
    pub l1_hit: f64,
    pub l2_hit: f64,
    pub dram: f64,
}

/// What an instruction's results wait for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wait {
    Arith,
    Shared,
    /// A global load: an L1 hit or a miss, told by its request's lines.
    Global,
    /// A global atomic, done at L2.
    Atomic,
    CpAsync,
    Commit,
    /// `cp.async.wait_group`: the groups but the `keep` newest land.
    Groups {
        keep: u32,
        commit: bool,
    },
}

impl Wait {
    fn of(op: &Op) -> Wait {
        let global = |s: &Space| !matches!(s, Space::Shared | Space::Const | Space::Param);
        match op {
            Op::Ld { space, .. } | Op::Atom { space, .. } if *space == Space::Shared => {
                Wait::Shared
            }
            Op::Ld { space, .. } if global(space) => Wait::Global,
            Op::Atom { .. } => Wait::Atomic,
            Op::Mma(m) => match **m {
                ptx::ir::MmaOp::Ldmatrix { .. } => Wait::Shared,
                ptx::ir::MmaOp::WmmaLoad { space, .. } if global(&space) => Wait::Global,
                ptx::ir::MmaOp::WmmaLoad { .. } => Wait::Shared,
                _ => Wait::Arith,
            },
            Op::CpAsync { .. } => Wait::CpAsync,
            Op::CpAsyncCommit => Wait::Commit,
            &Op::CpAsyncWait { keep, commit } => Wait::Groups { keep, commit },
            _ => Wait::Arith,
        }
    }
}

/// Times in clocks, with misses at the L2 hit latency (0) and at DRAM's (1).
type Clocks = [f64; 2];

fn later(a: Clocks, b: Clocks) -> Clocks {
    [a[0].max(b[0]), a[1].max(b[1])]
}

#[derive(Clone, Default)]
struct WarpPath {
    /// The earliest clock its next instruction can issue.
    next: Clocks,
    ready: Vec<Clocks>,
    pred_ready: Vec<Clocks>,
    /// The global lines it touched: another request for them hits L1.
    lines: HashSet<(usize, usize)>,
    /// When each committed `cp.async` group lands, and the copies not yet committed.
    groups: Vec<Clocks>,
    open: Clocks,
}

/// One block's path: its longest warp's clocks, and the requests' lines that missed L1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockPath {
    pub block: [u32; 3],
    pub clocks: Clocks,
    pub missed_lines: u64,
}

/// The tracker, fed by `profile::Profiler`.
pub struct Critical {
    lat: Latencies,
    insts: Vec<(Operands, Wait, f64)>,
    regs: usize,
    preds: usize,
    warps: Vec<WarpPath>,
    /// A global load (or copy) issued, its lines not yet seen: (warp, instruction, issue clock).
    pending: Option<(usize, u32, Clocks)>,
    block: [u32; 3],
    missed: u64,
    pub blocks: Vec<BlockPath>,
}

impl Critical {
    pub fn new(lat: Latencies) -> Self {
        Critical {
            lat,
            insts: vec![],
            regs: 0,
            preds: 0,
            warps: vec![],
            pending: None,
            block: [0; 3],
            missed: 0,
            blocks: vec![],
        }
    }

    pub fn start(&mut self, prog: &Program) {
        self.insts = (prog.insts.iter())
            .map(|i| (i.operands(), Wait::of(&i.op), i.op.sass_extra() as f64))
            .collect();
        (self.regs, self.preds) = (prog.nregs as usize, prog.npreds as usize);
    }

    pub fn begin(&mut self, block: [u32; 3]) {
        (self.block, self.missed, self.pending) = (block, 0, None);
        self.warps.clear();
    }

    /// Warp `warp` of the block issues instruction `inst`.
    pub fn issue(&mut self, warp: usize, inst: u32) {
        self.settle();
        let Some((ops, wait, extra)) = self.insts.get(inst as usize) else {
            return;
        };
        if self.warps.len() <= warp {
            let fresh = WarpPath {
                ready: vec![[0.0; 2]; self.regs],
                pred_ready: vec![[0.0; 2]; self.preds],
                ..WarpPath::default()
            };
            self.warps.resize(warp + 1, fresh);
        }
        let w = &mut self.warps[warp];
        let mut at = w.next;
        for &r in &ops.reads {
            at = later(at, w.ready.get(r as usize).copied().unwrap_or_default());
        }
        for &p in &ops.pred_reads {
            at = later(
                at,
                w.pred_ready.get(p as usize).copied().unwrap_or_default(),
            );
        }
        if let Wait::Groups { keep, commit } = *wait {
            if commit {
                w.groups.push(std::mem::take(&mut w.open));
            }
            let done = w.groups.len().saturating_sub(keep as usize);
            for g in w.groups.drain(..done) {
                at = later(at, g);
            }
        }
        w.next = at.map(|t| t + 1.0 + extra);
        let after = |c: f64| at.map(|t| t + c);
        let result = match wait {
            Wait::Arith | Wait::Groups { .. } => after(self.lat.arith * (1.0 + extra)),
            Wait::Shared => after(self.lat.shared),
            Wait::Atomic => after(self.lat.l2_hit),
            Wait::Global | Wait::CpAsync => {
                self.pending = Some((warp, inst, at));
                return;
            }
            Wait::Commit => {
                w.groups.push(std::mem::take(&mut w.open));
                return;
            }
        };
        for &p in &ops.pred_writes {
            if let Some(x) = w.pred_ready.get_mut(p as usize) {
                *x = after(self.lat.arith);
            }
        }
        set(&mut w.ready, &ops.writes, result);
    }

    /// The request of instruction `inst` touched `lines` of global memory (or memory of `space`).
    pub fn request(&mut self, inst: u32, space: Space, lines: &[(usize, usize)]) {
        let Some((warp, i, at)) = self.pending.filter(|p| p.1 == inst) else {
            return;
        };
        self.pending = None;
        let w = &mut self.warps[warp];
        let latency = match space {
            Space::Global => {
                let missed = lines.iter().filter(|l| !w.lines.contains(l)).count();
                w.lines.extend(lines);
                self.missed += missed as u64;
                if missed == 0 {
                    [self.lat.l1_hit; 2]
                } else {
                    [self.lat.l2_hit, self.lat.dram]
                }
            }
            Space::Shared => [self.lat.shared; 2],
            _ => [self.lat.arith; 2],
        };
        let done = [at[0] + latency[0], at[1] + latency[1]];
        match self.insts[i as usize].1 {
            Wait::CpAsync => w.open = later(w.open, done),
            _ => set(&mut w.ready, &self.insts[i as usize].0.writes, done),
        }
    }

    /// A load none of whose lanes touched memory: its registers are ready as arithmetic's.
    fn settle(&mut self) {
        if let Some((warp, i, at)) = self.pending.take() {
            let done = at.map(|t| t + self.lat.arith);
            set(
                &mut self.warps[warp].ready,
                &self.insts[i as usize].0.writes,
                done,
            );
        }
    }

    /// A `__syncthreads()` released the block.
    pub fn barrier(&mut self) {
        self.settle();
        let all = (self.warps.iter()).fold([0.0; 2], |a, w| later(a, w.next));
        self.warps.iter_mut().for_each(|w| w.next = all);
    }

    pub fn end_block(&mut self) {
        self.settle();
        let clocks = (self.warps.iter()).fold([0.0; 2], |a, w| later(a, w.next));
        self.blocks.push(BlockPath {
            block: self.block,
            clocks,
            missed_lines: self.missed,
        });
        self.warps.clear();
    }
}

fn set(ready: &mut [Clocks], writes: &[u32], at: Clocks) {
    for &r in writes {
        if let Some(x) = ready.get_mut(r as usize) {
            *x = at;
        }
    }
}

/// A block's critical path in clocks over `paths` (the sampled blocks `keep` takes), its misses
/// timed as DRAM's in the share that the DRAM bytes a block must read (`dram_per_block`) take of
/// the bytes its misses ask for, and as L2 hits otherwise; with that share. `None` where no block
/// was followed.
pub fn block_path(
    paths: &[BlockPath],
    keep: impl Fn(&[u32; 3]) -> bool,
    dram_per_block: f64,
) -> Option<(f64, f64)> {
    let kept: Vec<&BlockPath> = paths.iter().filter(|p| keep(&p.block)).collect();
    if kept.is_empty() {
        return None;
    }
    let n = kept.len() as f64;
    let mean = |f: &dyn Fn(&BlockPath) -> f64| kept.iter().map(|p| f(p)).sum::<f64>() / n;
    let missed_bytes = mean(&|p| p.missed_lines as f64 * 128.0);
    let dram = if missed_bytes > 0.0 {
        (dram_per_block / missed_bytes).min(1.0)
    } else {
        0.0
    };
    let clocks = (1.0 - dram) * mean(&|p| p.clocks[0]) + dram * mean(&|p| p.clocks[1]);
    Some((clocks, dram))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx::ir::{Addr, Bin, FMods, Inst, Rnd, Src, Ty};

    const LAT: Latencies = Latencies {
        arith: 4.0,
        shared: 30.0,
        l1_hit: 35.0,
        l2_hit: 260.0,
        dram: 480.0,
    };

    /// `ld.global.f32 d, [base + off]`.
    fn ld(d: u32, base: u32, off: i64) -> Inst {
        Inst::new(Op::Ld {
            space: Space::Global,
            ty: Ty::F32,
            ds: vec![d],
            addr: Addr {
                base: Some(base),
                off,
            },
            unused: 0,
        })
    }

    fn add(d: u32, a: u32, b: u32) -> Inst {
        let m = FMods {
            rnd: Rnd::Rn,
            ftz: false,
            sat: false,
            approx: false,
        };
        Inst::new(Op::Bin {
            op: Bin::Add,
            ty: Ty::F32,
            m,
            d,
            a: Src::Reg(a),
            b: Src::Reg(b),
        })
    }

    /// Runs one warp of one block through `insts`, the `i`th's request on line `lines[i]`.
    fn path(insts: Vec<Inst>, lines: &[usize]) -> Clocks {
        let prog = Program {
            insts,
            nregs: 8,
            ..Program::default()
        };
        let mut k = Critical::new(LAT);
        k.start(&prog);
        k.begin([0; 3]);
        for i in 0..prog.insts.len() {
            k.issue(0, i as u32);
            if let Some(&line) = lines.get(i) {
                k.request(i as u32, Space::Global, &[(0, line)]);
            }
        }
        k.end_block();
        k.blocks[0].clocks
    }

    #[test]
    fn loads_waited_on_one_after_the_other_add_up_and_loads_issued_together_overlap() {
        // Pointer chasing: each load's address is the one before's result; the third issues
        // after two latencies (its own result is waited on by nothing).
        let chain = path(vec![ld(1, 0, 0), ld(2, 1, 0), ld(3, 2, 0)], &[0, 1, 2]);
        assert_eq!(chain, [2.0 * 260.0 + 1.0, 2.0 * 480.0 + 1.0]);
        // Two loads issued back to back, then an add of both: one latency and two clocks.
        let burst = vec![ld(1, 0, 0), ld(2, 0, 128), add(3, 1, 2)];
        assert_eq!(path(burst, &[0, 1]), [261.0 + 1.0, 481.0 + 1.0]);
        // The second load of a line the warp read before hits L1.
        let again = path(vec![ld(1, 0, 0), ld(2, 1, 0), add(3, 2, 2)], &[5, 5]);
        assert_eq!(again, [260.0 + 35.0 + 1.0, 480.0 + 35.0 + 1.0]);
    }

    #[test]
    fn a_barrier_holds_every_warp_until_the_latest_and_the_block_takes_its_longest_warp() {
        let prog = Program {
            insts: vec![ld(1, 0, 0), add(2, 1, 1), add(3, 0, 0)],
            nregs: 4,
            ..Program::default()
        };
        let mut k = Critical::new(LAT);
        k.start(&prog);
        k.begin([1, 0, 0]);
        // Warp 0 waits on its load; warp 1 only adds; then both add once more after a barrier.
        k.issue(0, 0);
        k.request(0, Space::Global, &[(0, 0)]);
        k.issue(0, 1);
        k.issue(1, 2);
        k.barrier();
        k.issue(1, 2);
        k.end_block();
        assert_eq!(k.blocks[0].clocks, [262.0, 482.0]);
        assert_eq!(k.blocks[0].missed_lines, 1);
        // Misses half from DRAM (64 of the 128 bytes a block's one missed line asks for).
        let (clocks, share) = block_path(&k.blocks, |_| true, 64.0).unwrap();
        assert_eq!((clocks, share), (372.0, 0.5));
        assert_eq!(block_path(&k.blocks, |b| b[0] == 0, 64.0), None);
    }
}
