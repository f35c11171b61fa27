//! The counts behind `runner profile`: an observer of the simulator (`sim::observe`)
//! that adds up, per PTX instruction, what the hardware would be asked to do.
//!
//! - issued: warp-instructions issued, and the lanes that executed them (divergence);
//! - global memory: requests (one per warp-instruction that touches it), the 32-byte sectors each
//!   touches (coalescing), the 128-byte lines, and the L1 wavefronts: one for every 4 lines of a
//!   request (the tag stage resolves 4 lines of 4 sectors per clock; `model`);
//! - shared memory: requests and wavefronts, as many as the most distinct 4-byte words one bank
//!   holds (bank conflicts); constant memory: requests, the distinct addresses each reads
//!   (serialized on a GPU), and the constant cache lines read (`constcache::Lines`);
//! - where the runner asks (`runner/src/profile/`), each sampled warp's critical path
//!   (`critical`), fed the same hooks.
//!
//! The accesses of one instruction arrive together, so a request ends when an access of another
//! instruction or space arrives. The runner makes the counts a table, `model` a time.

use crate::constcache::Lines;
use crate::critical::Critical;
use ptx::ir::Mix;
use ptx::ir::{Space, TensorPipe};
use sim::observe::{Acc, Issue, Launched, Observer, Touch};

/// The counts of one instruction (or their sum over a line or the kernel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub issued: u64,
    pub lanes: u64,
    pub global_requests: u64,
    pub sectors: u64,
    pub lines: u64,
    /// L1 wavefronts of the global requests.
    pub global_wavefronts: u64,
    pub global_bytes: u64,
    pub shared_requests: u64,
    pub wavefronts: u64,
    pub const_requests: u64,
    pub const_addresses: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.issued += o.issued;
        self.lanes += o.lanes;
        self.global_requests += o.global_requests;
        self.sectors += o.sectors;
        self.lines += o.lines;
        self.global_wavefronts += o.global_wavefronts;
        self.global_bytes += o.global_bytes;
        self.shared_requests += o.shared_requests;
        self.wavefronts += o.wavefronts;
        self.const_requests += o.const_requests;
        self.const_addresses += o.const_addresses;
    }
}

/// The 128-byte lines of one global request that one L1 wavefront serves.
pub const LINES_PER_WAVEFRONT: u64 = 4;

/// The request being gathered: its instruction, space, and what its lanes touched.
struct Pending {
    inst: u32,
    space: Space,
    /// Global: (buffer, sector); shared and const: (0, 4-byte word).
    units: Vec<(usize, usize)>,
    lines: Vec<(usize, usize)>,
    bytes: u64,
}

/// The observer: counts per instruction, and which blocks to run (`None`: all).
pub struct Profiler {
    pub per_inst: Vec<Counts>,
    pub lines: Vec<u32>,
    pub classes: Vec<Mix>,
    /// Each instruction's tensor-core work per warp issue (`Op::tensor_work`).
    tensor: Vec<Option<(TensorPipe, u64)>>,
    /// Each instruction's SASS instructions beyond its own (`ptx::ir::Op::sass_extra`).
    sass_extra: Vec<u64>,
    pub sample: Option<Vec<[u32; 3]>>,
    /// Sampled blocks start only while fewer thread-instructions than this have run (a profile
    /// takes seconds, the same ones on every machine).
    pub budget: u64,
    /// A sampled block run whatever the budget (`runner profile`'s probe past the SMs).
    pub probe: Option<[u32; 3]>,
    /// Each block run and its global and shared accesses, in the order they ran.
    pub block_accesses: Vec<([u32; 3], u64)>,
    /// Each block's shared memory, static and dynamic (from the launch).
    pub shared_bytes: usize,
    /// The constants the blocks run read (`constcache`).
    pub const_lines: Lines,
    /// Each sampled warp's critical path (`critical`), where the profile asks for it.
    pub critical: Option<Critical>,
    executed: u64,
    pending: Option<Pending>,
}

impl Profiler {
    pub fn new(sample: Option<Vec<[u32; 3]>>) -> Self {
        Profiler {
            per_inst: vec![],
            lines: vec![],
            classes: vec![],
            tensor: vec![],
            sass_extra: vec![],
            sample,
            budget: 250_000_000,
            probe: None,
            block_accesses: vec![],
            shared_bytes: 0,
            const_lines: Lines::default(),
            critical: None,
            executed: 0,
            pending: None,
        }
    }

    fn flush(&mut self) {
        let Some(mut p) = self.pending.take() else {
            return;
        };
        for v in [&mut p.units, &mut p.lines] {
            v.sort_unstable();
            v.dedup();
        }
        self.critical
            .iter_mut()
            .for_each(|k| k.request(p.inst, p.space, &p.lines));
        let Some(c) = self.per_inst.get_mut(p.inst as usize) else {
            return;
        };
        match p.space {
            Space::Shared => {
                let mut per_bank = [0u64; 32];
                for &(_, word) in &p.units {
                    per_bank[word % 32] += 1;
                }
                c.shared_requests += 1;
                c.wavefronts += per_bank.iter().copied().max().unwrap_or(0).max(1);
            }
            Space::Const => {
                c.const_requests += 1;
                c.const_addresses += p.units.len() as u64;
            }
            _ => {
                c.global_requests += 1;
                c.sectors += p.units.len() as u64;
                c.lines += p.lines.len() as u64;
                c.global_wavefronts += (p.lines.len() as u64).div_ceil(LINES_PER_WAVEFRONT);
                c.global_bytes += p.bytes;
            }
        }
    }

    /// How many blocks ran.
    pub fn blocks_run(&self) -> u64 {
        self.block_accesses.len() as u64
    }

    /// The counts summed over the kernel.
    pub fn total(&self) -> Counts {
        let mut t = Counts::default();
        self.per_inst.iter().for_each(|c| t.add(c));
        t
    }

    /// The tensor-core work of the blocks run (tf32 FLOP): through `mma.sync`, through `wgmma`.
    pub fn tensor_work(&self) -> (u64, u64) {
        let mut work = (0, 0);
        for (c, t) in self.per_inst.iter().zip(&self.tensor) {
            match t {
                Some((TensorPipe::MmaSync, f)) => work.0 += c.issued * f,
                Some((TensorPipe::Wgmma, f)) => work.1 += c.issued * f,
                None => {}
            }
        }
        work
    }

    /// Warp-instructions issued as SASS counts them: the PTX's, plus `ptx::ir::Op::sass_extra`.
    pub fn sass_issued(&self) -> u64 {
        let extra: u64 = (self.per_inst.iter().zip(&self.sass_extra))
            .map(|(c, x)| c.issued * x)
            .sum();
        self.total().issued + extra
    }

    /// Warp-instructions issued that `ptxas` expands into many (`ptx::ir::Op::sass_extra`).
    pub fn expanded(&self) -> u64 {
        (self.per_inst.iter().zip(&self.sass_extra))
            .filter(|(_, x)| **x > 0)
            .map(|(c, _)| c.issued)
            .sum()
    }

    /// Warp-instructions issued per class.
    pub fn mix(&self) -> Vec<(Mix, u64)> {
        Mix::ALL
            .iter()
            .map(|&k| {
                let n = (0..self.per_inst.len())
                    .filter(|&i| self.classes[i] == k)
                    .map(|i| self.per_inst[i].issued)
                    .sum();
                (k, n)
            })
            .collect()
    }
}

impl Observer for Profiler {
    fn start(&mut self, l: &Launched<'_>) {
        self.per_inst = vec![Counts::default(); l.prog.insts.len()];
        self.shared_bytes = l.shared_bytes;
        self.lines = l.prog.insts.iter().map(|i| i.line).collect();
        self.classes = l.prog.insts.iter().map(|i| i.op.mix()).collect();
        self.tensor = l.prog.insts.iter().map(|i| i.op.tensor_work()).collect();
        self.sass_extra = l.prog.insts.iter().map(|i| i.op.sass_extra()).collect();
        self.critical.iter_mut().for_each(|k| k.start(l.prog));
    }

    fn runs_block(&mut self, block: [u32; 3]) -> bool {
        // A sampled profile keeps to its time budget once one block has run.
        let run = match &self.sample {
            None => true,
            Some(s) => {
                s.contains(&block)
                    && (self.block_accesses.is_empty()
                        || self.executed < self.budget
                        || self.probe == Some(block))
            }
        };
        if run {
            self.block_accesses.push((block, 0));
            self.critical.iter_mut().for_each(|k| k.begin(block));
        }
        run
    }

    fn issue(&mut self, i: Issue) {
        self.flush();
        self.critical
            .iter_mut()
            .for_each(|k| k.issue(i.warp as usize, i.inst));
        if let Some(c) = self.per_inst.get_mut(i.inst as usize) {
            c.issued += 1;
            c.lanes += u64::from(i.exec.count_ones());
        }
        self.executed += u64::from(i.exec.count_ones());
    }

    fn access(&mut self, t: &Touch) {
        if t.acc == Acc::Quiet {
            return;
        }
        if matches!(t.space, Space::Global | Space::Shared)
            && let Some(b) = self.block_accesses.last_mut()
        {
            b.1 += 1;
        }
        if self
            .pending
            .as_ref()
            .is_some_and(|p| p.inst != t.inst || p.space != t.space)
        {
            self.flush();
        }
        let p = self.pending.get_or_insert_with(|| Pending {
            inst: t.inst,
            space: t.space,
            units: Vec::with_capacity(64),
            lines: Vec::with_capacity(64),
            bytes: 0,
        });
        let (first, last) = (t.byte, t.byte + t.bytes.max(1) as usize - 1);
        match t.space {
            Space::Global => {
                for s in first / 32..=last / 32 {
                    p.units.push((t.buf, s));
                }
                for l in first / 128..=last / 128 {
                    p.lines.push((t.buf, l));
                }
            }
            space => {
                self.const_lines.record(space, t.buf, first, last);
                for w in first / 4..=last / 4 {
                    p.units.push((0, w));
                }
            }
        }
        p.bytes += u64::from(t.bytes);
    }

    fn barrier(&mut self) {
        self.flush();
        self.critical.iter_mut().for_each(|k| k.barrier());
    }

    fn end_block(&mut self) {
        self.flush();
        self.critical.iter_mut().for_each(|k| k.end_block());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One warp-instruction at `inst` whose 32 lanes touch `space` at `byte(lane)`.
    fn request(p: &mut Profiler, inst: u32, space: Space, byte: impl Fn(usize) -> usize) {
        p.issue(Issue {
            warp: 0,
            inst,
            active: u32::MAX,
            exec: u32::MAX,
        });
        for lane in 0..32 {
            p.access(&Touch {
                space,
                buf: 0,
                byte: byte(lane),
                bytes: 4,
                thread: lane as u32,
                inst,
                acc: Acc::Read,
            });
        }
    }

    fn counts(space: Space, byte: impl Fn(usize) -> usize) -> Counts {
        let mut p = Profiler::new(None);
        p.per_inst = vec![Counts::default(); 2];
        p.classes = vec![Mix::Other; 2];
        request(&mut p, 0, space, byte);
        p.end_block();
        p.per_inst[0]
    }

    #[test]
    fn coalesced_strided_and_broadcast_global_loads_touch_the_sectors_a_gpu_would() {
        let c = counts(Space::Global, |l| 4 * l);
        assert_eq!((c.global_requests, c.sectors, c.lines), (1, 4, 1));
        assert_eq!(c.global_wavefronts, 1);
        // One float off the 128-byte line: five sectors over two lines, still one wavefront.
        let c = counts(Space::Global, |l| 4 + 4 * l);
        assert_eq!((c.sectors, c.lines, c.global_wavefronts), (5, 2, 1));
        let c = counts(Space::Global, |l| 8 * l);
        assert_eq!((c.sectors, c.lines), (8, 2));
        let c = counts(Space::Global, |_| 64);
        assert_eq!((c.sectors, c.lines, c.global_bytes), (1, 1, 128));
        // A line per lane (a stride of 32 floats): 32 lines, 8 wavefronts.
        let c = counts(Space::Global, |l| 128 * l);
        assert_eq!((c.sectors, c.lines, c.global_wavefronts), (32, 32, 8));
    }

    #[test]
    fn shared_wavefronts_count_the_worst_bank() {
        assert_eq!(counts(Space::Shared, |l| 4 * l).wavefronts, 1);
        // Everyone reads one word: a broadcast.
        assert_eq!(counts(Space::Shared, |_| 12).wavefronts, 1);
        // Stride of two words: two lanes per bank.
        assert_eq!(counts(Space::Shared, |l| 8 * l).wavefronts, 2);
        // A column of a 32-wide tile: every lane in bank 0.
        assert_eq!(counts(Space::Shared, |l| 128 * l).wavefronts, 32);
        // Padding the row to 33 words removes the conflict.
        assert_eq!(counts(Space::Shared, |l| 132 * l).wavefronts, 1);
    }

    #[test]
    fn each_instruction_is_its_own_request_and_divergence_shows_in_lanes() {
        let mut p = Profiler::new(None);
        p.per_inst = vec![Counts::default(); 2];
        p.classes = vec![Mix::Other; 2];
        request(&mut p, 0, Space::Global, |l| 4 * l);
        request(&mut p, 1, Space::Global, |l| 4 * l);
        p.issue(Issue {
            warp: 0,
            inst: 1,
            active: u32::MAX,
            exec: 0xffff,
        });
        p.end_block();
        assert_eq!(p.per_inst[0].global_requests, 1);
        assert_eq!((p.per_inst[1].issued, p.per_inst[1].lanes), (2, 48));
    }
}
