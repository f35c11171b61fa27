//! Calls: device functions that NVRTC did not inline (`__noinline__`, recursion), decoded once
//! into the program before the kernel's own code and run with a call stack per thread; and the
//! built-in `vprintf` (`printf`, formatted in `printf`) and `__assertfail` (a failed `assert`).
//!
//! Decoding: the functions the kernel can reach are found from its `call`s (callees before their
//! callers, so that the lowest-pc-first scheduling of `exec` runs a called function before the
//! lanes that skipped the call move on, and they meet again after it); each gets its own
//! registers, predicates and local bytes (its parameters and return value are `.param`
//! variables laid out in local memory, like a call's arguments).
//!
//! Running: a `call` pushes, for each calling lane, a [`Frame`] holding the return address and
//! the callee's registers, predicates and local bytes as they were, then copies the arguments
//! into the callee's parameters; `ret` copies the return value out, restores the frame and sends
//! each lane back to its own return address. A recursive call therefore has a frame of its own,
//! like the GPU's stack frame. Past [`MAX_DEPTH`] nested calls a lane's call is `stack_overflow`.
//! Limit: a pointer to a recursive function's local array, passed down to a deeper call of the
//! same function, sees that call's frame, not the caller's.

use crate::fault::{Fault, Located};
use crate::machine::Frame;
use crate::machine::{Machine, Warp};
use crate::memory::Spaces;
use ptx::demangle;
use ptx::ir::*;

/// Calls a thread may nest: as deep as the simplest recursive function goes on the GPU's default
/// stack (1 KiB per thread). Measured on an H100 (`bench/stack_probe.cu`, a process per depth):
/// a function with ptxas's smallest frame, 16 bytes, nests 64 calls and faults (illegal memory
/// access) at 65; one with a 104-byte frame 10, one with 248 bytes 4. No recursion gets deeper on
/// the default stack, so this limit never stops a kernel the GPU runs; one with larger frames can
/// fault on the GPU before it, which the simulator does not model (it sees no SASS frame sizes).
pub const MAX_DEPTH: usize = 64;

/// The functions of `module` that `entry` calls, directly or not, callees first.
impl Machine<'_> {
    /// `call` of `prog.funcs[func]` by the lanes in `exec`: each pushes a frame and gets the
    /// arguments; the warp's current group moves to the function's first instruction.
    pub(super) fn call(
        &mut self,
        w: &mut Warp,
        exec: u32,
        pc: usize,
        func: u32,
        args: &[u64],
        ret: Option<u64>,
    ) -> Result<(), Located> {
        let f = &self.prog.funcs[func as usize];
        let lb = self.prog.local_bytes as usize;
        if w.frames.is_empty() {
            w.frames = vec![Vec::new(); 32];
        }
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            if w.frames[l].len() >= MAX_DEPTH {
                let fault = Fault::StackOverflow {
                    func: demangle(&f.name),
                    depth: MAX_DEPTH,
                };
                return Err(self.fault(fault, Some(pc), Some(w), Some(l)));
            }
            let base = l * lb;
            let values: Vec<Vec<u8>> = args
                .iter()
                .zip(&f.params)
                .map(|(&from, &(_, n))| {
                    let at = base + from as usize;
                    w.local[at..at + n as usize].to_vec()
                })
                .collect();
            let local = base + f.local.start as usize..base + f.local.end as usize;
            let frame = Frame {
                func,
                back: pc as u32 + 1,
                ret_to: ret,
                regs: f
                    .regs
                    .clone()
                    .map(|r| w.regs[r as usize * 32 + l])
                    .collect(),
                preds: f
                    .preds
                    .clone()
                    .map(|p| w.preds[p as usize] >> l & 1 == 1)
                    .collect(),
                local: w.local[local].to_vec(),
            };
            for (v, &(to, _)) in values.iter().zip(&f.params) {
                let at = base + to as usize;
                w.local[at..at + v.len()].copy_from_slice(v);
            }
            w.frames[l].push(frame);
        }
        let rest = w.active & !exec;
        if rest != 0 {
            w.others.push((w.pc + 1, rest));
        }
        w.active = exec;
        w.pc = f.pc;
        Ok(())
    }

    /// `ret` by the lanes in `exec`: each takes the return value out of its frame's function,
    /// restores the frame and goes back to its own return address (lanes with no frame exit).
    pub(super) fn ret(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
    ) -> Result<(), Located> {
        let out = self.pop_frames(w, exec);
        if out != 0 {
            for l in (0..32).filter(|l| out >> l & 1 == 1) {
                w.exit_pc[l] = pc as u32;
            }
            w.exited |= out;
            self.land(w, shared, out, |_, _| true)?;
        }
        Ok(())
    }

    /// The frames' half of `ret`; returns the lanes that had none.
    fn pop_frames(&mut self, w: &mut Warp, exec: u32) -> u32 {
        let lb = self.prog.local_bytes as usize;
        let mut exited = 0;
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            let Some(frame) = w.frames.get_mut(l).and_then(Vec::pop) else {
                exited |= 1 << l;
                continue;
            };
            let f = &self.prog.funcs[frame.func as usize];
            let base = l * lb;
            let value = f.ret.map(|(at, n)| {
                let at = base + at as usize;
                w.local[at..at + n as usize].to_vec()
            });
            for (r, v) in f.regs.clone().zip(&frame.regs) {
                w.regs[r as usize * 32 + l] = *v;
            }
            for (p, &v) in f.preds.clone().zip(&frame.preds) {
                let bit = 1u32 << l;
                let old = w.preds[p as usize] & !bit;
                w.preds[p as usize] = old | if v { bit } else { 0 };
            }
            let local = base + f.local.start as usize;
            w.local[local..local + frame.local.len()].copy_from_slice(&frame.local);
            if let (Some(v), Some(to)) = (value, frame.ret_to) {
                let at = base + to as usize;
                w.local[at..at + v.len()].copy_from_slice(&v);
            }
            match w.others.iter_mut().find(|g| g.0 == frame.back) {
                Some(g) => g.1 |= 1 << l,
                None => w.others.push((frame.back, 1 << l)),
            }
        }
        w.active &= !exec;
        w.pc += 1;
        exited
    }
}

impl Machine<'_> {
    /// The fault of `trap` or of `__assertfail` in `lane`: for an assert, its condition, file,
    /// line and function as the kernel passed them (what the GPU prints).
    pub(super) fn trap(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        pc: usize,
        lane: usize,
        op: &Op,
    ) -> Fault {
        let Op::AssertFail { args } = op else {
            return Fault::Trap { assert: None };
        };
        let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
        let mut text = |i: usize| {
            let addr = sp.load(Space::Local, args[i], 8, lane).ok()?;
            crate::printf::c_string(&mut sp, lane, addr).ok()
        };
        let (cond, file, func) = (text(0), text(1), text(3));
        let line = sp.load(Space::Local, args[2], 4, lane).ok();
        Fault::Trap {
            assert: Some(crate::fault::Assert {
                cond: cond.unwrap_or_default(),
                file: file.unwrap_or_default(),
                line: line.unwrap_or(0) as u32,
                func: func.unwrap_or_default(),
            }),
        }
    }
}

impl Machine<'_> {
    /// `printf` in each executing lane, in lane order: reads the format and argument addresses
    /// from the call's parameters in the lane's local memory and keeps the text with the thread.
    pub(super) fn printf(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        [fmt, args]: [u64; 2],
        ret: Option<u64>,
    ) -> Result<(), Located> {
        if self.out.printed_full() {
            // Nothing more is kept: count the calls and skip reading and formatting them (their
            // return value goes unwritten, which no kernel here reads).
            self.out.printed_more += u64::from(exec.count_ones());
            return Ok(());
        }
        let mut printed = Vec::new();
        let result = {
            let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
            (0..32).filter(|l| exec >> l & 1 == 1).try_for_each(|l| {
                let one = |sp: &mut Spaces<'_>| {
                    let f = sp.load(Space::Local, fmt, 8, l)?;
                    let a = sp.load(Space::Local, args, 8, l)?;
                    let (text, n) = crate::printf::vprintf(sp, l, f, a)?;
                    if let Some(r) = ret {
                        sp.store(Space::Local, r, 4, n, l)?;
                    }
                    Ok(text)
                };
                printed.push((l, one(&mut sp).map_err(|e| (e, l))?));
                Ok(())
            })
        };
        for (l, text) in printed {
            self.out.print(spec::job::Printed {
                block: Some(self.block_id),
                thread: Some(self.thread_of(w.first_tid + l as u32)),
                text,
            });
        }
        result.map_err(|(mem, l)| {
            self.fault(
                Fault::OutOfBounds { write: false, mem },
                Some(pc),
                Some(w),
                Some(l),
            )
        })
    }
}
