//! `cp.async.bulk`: the bulk copies of compute capability 9.0 (the TMA unit's one-dimensional
//! form, no tensor map), per the PTX ISA ("Data Movement and Conversion Instructions:
//! cp.async.bulk"):
//!
//! - global to shared, `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst],
//!   [src], size, [mbar]` (`.shared::cta` too): the copy's completion takes `size` bytes off the
//!   transaction count of the mbarrier (`mbarrier`), whose phase then completes once its arrivals
//!   are in as well;
//! - shared to global, `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size`, in the
//!   issuing thread's bulk groups: `cp.async.bulk.commit_group` closes the open group and
//!   `cp.async.bulk.wait_group{.read} n` waits until at most `n` groups are in flight (`.read`:
//!   until they have read their source).
//!
//! A copy moves its bytes when it is issued, as the issuing thread's accesses at its line: the
//! checks see its shared writes (or reads) as that thread's, so a thread of another warp that
//! reads a loaded stage before waiting on its mbarrier races with the copy (the issuing
//! thread's own warp included: its lanes that wait are ordered after the copy, the others are
//! not), and a stored
//! buffer that nobody wrote is an uninitialized read. Its completion releases the issuing warp
//! into the mbarrier's phase, which is what orders the copy before the threads that wait. A
//! store's source stays "being read" until its thread's `wait_group.read` covers its group: a
//! write into it before then (the same thread reusing a staging buffer included) is a race at
//! both lines. Sizes must be multiples of 16 and both addresses 16-byte aligned; a copy that
//! breaks that is diagnosed at its line. The tensor forms (`.tensor`) are `tensor_map`'s. Not
//! simulated: multicast and the shared-to-shared form (clusters), and `cp.reduce.async.bulk`;
//! `cp.async.bulk.prefetch` is a hint and does nothing.

use super::check::Acc;
use super::decode::{Ctx as Dx, DecodeError};
use super::exec::{Machine, Warp};
use super::fault::{Fault, Located};
use super::ir::*;
use super::opcode::Word;
use super::parse::Operand;

/// One decoded bulk instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum BulkOp {
    /// Global `src` to shared `dst`, `size` bytes, completing on the mbarrier at `mbar`.
    Load {
        dst: Addr,
        src: Addr,
        size: Src,
        mbar: Addr,
    },
    /// Shared `src` to global `dst`, `size` bytes, in the thread's open bulk group.
    Store {
        dst: Addr,
        src: Addr,
        size: Src,
    },
    Commit,
    /// At most `keep` of the thread's committed groups left in flight.
    Wait {
        keep: u32,
    },
    /// The box at `coords` of the tensor map at `map` into shared `dst`, completing on `mbar`
    /// (`tensor_map`).
    TensorLoad {
        dst: Addr,
        map: Addr,
        coords: Vec<Src>,
        mbar: Addr,
    },
    /// Shared `src` to the box at `coords` of the tensor map at `map`, in the open bulk group.
    TensorStore {
        map: Addr,
        coords: Vec<Src>,
        src: Addr,
    },
}

/// `cp.async.bulk...` (and `cp.reduce.async.bulk...`, refused).
pub(super) fn decode(cx: &mut Dx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    if w.has("reduce") {
        return w.unsupported("`cp.reduce.async.bulk` is not simulated");
    }
    if w.has("tensor") {
        return tensor(cx, w, ops);
    }
    if w.has("prefetch") {
        return Ok(Op::Nop);
    }
    if w.has("commit_group") {
        return Ok(Op::Bulk(Box::new(BulkOp::Commit)));
    }
    if w.has("wait_group") {
        w.need(1)?;
        let keep = match &ops[0] {
            Operand::Word { w: n, .. } => super::parse::parse_int(n),
            _ => None,
        };
        return match keep.and_then(|k| u32::try_from(k).ok()) {
            Some(keep) => Ok(Op::Bulk(Box::new(BulkOp::Wait { keep }))),
            None => cx.bad(
                line,
                "`cp.async.bulk.wait_group` needs a constant count of groups",
            ),
        };
    }
    if w.mods.iter().any(|m| m.starts_with("multicast")) {
        return w.unsupported(
            "clusters are not simulated (a multicast bulk copy writes every block of one)",
        );
    }
    // The destination's state space comes first: `.shared::cluster.global` loads, `.global
    // .shared::cta` stores.
    let shared = |m: &&str| *m == "shared::cluster" || *m == "shared::cta" || *m == "shared";
    let first_space = w
        .mods
        .iter()
        .find(|m| shared(m) || **m == "global")
        .copied();
    let spaces = w.mods.iter().filter(|m| shared(m)).count();
    if spaces == 2 {
        return w.unsupported("clusters are not simulated (a shared-to-shared bulk copy writes another block of the cluster)");
    }
    match first_space {
        Some("global") if w.has("bulk_group") && spaces == 1 => {
            w.need(3)?;
            Ok(Op::Bulk(Box::new(BulkOp::Store {
                dst: cx.addr(&ops[0], line)?,
                src: cx.addr(&ops[1], line)?,
                size: cx.src(&ops[2], Ty::U32, line)?,
            })))
        }
        Some(s) if s != "global" && w.has("global") && w.has("mbarrier::complete_tx::bytes") => {
            w.need(4)?;
            Ok(Op::Bulk(Box::new(BulkOp::Load {
                dst: cx.addr(&ops[0], line)?,
                src: cx.addr(&ops[1], line)?,
                size: cx.src(&ops[2], Ty::U32, line)?,
                mbar: cx.addr(&ops[3], line)?,
            })))
        }
        _ => w.unsupported("of the bulk copies it runs `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` and `cp.async.bulk.global.shared::cta.bulk_group`, with `commit_group` and `wait_group`"),
    }
}

/// `cp.async.bulk.tensor...`: the tiled loads and stores (`tensor_map`).
fn tensor(cx: &mut Dx, w: &Word<'_>, ops: &[Operand]) -> Result<Op, DecodeError> {
    let line = w.line;
    if let Some(m) = w
        .mods
        .iter()
        .find(|m| m.starts_with("im2col") || m.starts_with("gather") || m.starts_with("scatter"))
    {
        return w.unsupported(&format!(
            "the `.{m}` mode is not simulated: the simulator copies tiled boxes (`.tile`)"
        ));
    }
    if w.mods.iter().any(|m| m.starts_with("multicast")) {
        return w.unsupported(
            "clusters are not simulated (a multicast copy writes every block of one)",
        );
    }
    let dims = w
        .mods
        .iter()
        .find_map(|m| m.strip_suffix('d').and_then(|n| n.parse::<usize>().ok()));
    let first_space = w
        .mods
        .iter()
        .find(|m| **m == "global" || m.starts_with("shared"));
    match first_space {
        Some(s) if s.starts_with("shared") && w.has("mbarrier::complete_tx::bytes") => {
            w.need(3)?;
            let (map, coords) = super::tensor_map::tensor_operand(cx, &ops[1], line)?;
            if dims != Some(coords.len()) {
                return cx.bad(line, format!("`{}` gives {} coordinates", w.text, coords.len()));
            }
            Ok(Op::Bulk(Box::new(BulkOp::TensorLoad {
                dst: cx.addr(&ops[0], line)?,
                map,
                coords,
                mbar: cx.addr(&ops[2], line)?,
            })))
        }
        Some(&"global") if w.has("bulk_group") => {
            w.need(2)?;
            let (map, coords) = super::tensor_map::tensor_operand(cx, &ops[0], line)?;
            if dims != Some(coords.len()) {
                return cx.bad(line, format!("`{}` gives {} coordinates", w.text, coords.len()));
            }
            Ok(Op::Bulk(Box::new(BulkOp::TensorStore {
                map,
                coords,
                src: cx.addr(&ops[1], line)?,
            })))
        }
        _ => w.unsupported("of the tensor copies the simulator runs global to shared on an mbarrier (`.mbarrier::complete_tx::bytes`) and shared to global in bulk groups (`.bulk_group`)"),
    }
}

impl Machine<'_> {
    /// One bulk instruction over the lanes `exec` of warp `w`, in lane order.
    pub(super) fn bulk(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &BulkOp,
    ) -> Result<(), Located> {
        let lanes: Vec<usize> = (0..32).filter(|l| exec >> l & 1 == 1).collect();
        let on = self.chk.on;
        let (dst, src, size, mbar, load) = match *op {
            BulkOp::Commit => {
                if on {
                    for &l in &lanes {
                        self.chk.bulk_commit(w.first_tid + l as u32);
                    }
                }
                return Ok(());
            }
            BulkOp::Wait { keep } => {
                if on {
                    for &l in &lanes {
                        self.chk.bulk_wait(w.first_tid + l as u32, keep);
                    }
                }
                return Ok(());
            }
            BulkOp::Load {
                dst,
                src,
                size,
                mbar,
            } => (dst, src, size, Some(mbar), true),
            BulkOp::Store { dst, src, size } => (dst, src, size, None, false),
            BulkOp::TensorLoad { .. } | BulkOp::TensorStore { .. } => {
                return self.bulk_tensor(w, shared, exec, pc, op);
            }
        };
        let (dsts, srcs, sizes, bars) = {
            let cx = w.ctx(exec, self.executed);
            (
                cx.addrs(dst),
                cx.addrs(src),
                cx.get(size),
                mbar.map(|a| cx.addrs(a)),
            )
        };
        // The global side of a load is read quietly: inputs, not one thread's work.
        let (from, to, acc) = if load {
            (Space::Global, Space::Shared, Acc::Quiet)
        } else {
            (Space::Shared, Space::Global, Acc::Read)
        };
        for &l in &lanes {
            let (d, s, n) = (dsts[l], srcs[l], sizes[l] as u32);
            if n == 0 || n % 16 != 0 || d % 16 != 0 || s % 16 != 0 {
                let at = |space: Space, a: u64| match space {
                    Space::Shared => format!("shared byte {a}"),
                    _ => format!("global address {a:#x}"),
                };
                let text = &self.prog.texts[self.prog.insts[pc].text as usize];
                let detail = format!(
                    "`{text}` copies {n} bytes from {} to {}, but a bulk copy moves a positive multiple of 16 bytes between 16-byte-aligned addresses (on a GPU the launch stops with \"misaligned address\")",
                    at(from, s),
                    at(to, d)
                );
                return Err(self.fault(Fault::Misaligned { detail }, Some(pc), Some(w), Some(l)));
            }
            let moved = {
                let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
                (0..u64::from(n)).step_by(4).try_for_each(|i| {
                    let v = sp.load_as(from, s + i, 4, l, acc).map_err(|e| (e, false))?;
                    sp.store(to, d + i, 4, v, l).map_err(|e| (e, true))
                })
            };
            moved.map_err(|e| self.copy_fault(e, pc, w, l))?;
            self.bulk_done(w, shared, pc, l, bars.map(|b| b[l]), (s, n))?;
        }
        Ok(())
    }

    /// After lane `l`'s copy of `n` bytes from (or to) shared `s`: a load completes on the
    /// mbarrier at `bar`; a store's source stays being read until its group is waited for.
    pub(super) fn bulk_done(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        pc: usize,
        l: usize,
        bar: Option<u64>,
        (s, n): (u64, u32),
    ) -> Result<(), Located> {
        let on = self.chk.on;
        let wi = (w.first_tid / 32) as usize;
        match bar {
            Some(a) => {
                // The copy's writes are the async proxy's, not its thread's: lanes of the
                // issuing warp that wait for it are ordered after them as other warps are
                // (its lane counts as passing a `__syncwarp()`, which the wait is for them).
                if on {
                    self.chk.syncwarp(w.first_tid, 1 << l);
                }
                if a % 8 != 0 || a + 8 > shared.len() as u64 {
                    let why = format!(
                        "completes on shared byte {a}, but an mbarrier object is 8 bytes, 8-aligned, inside the block's {} bytes of shared memory",
                        shared.len()
                    );
                    return Err(self.misuse(pc, w, Some(l), &why));
                }
                let a = a as u32;
                self.tx(a, -i64::from(n), wi).map_err(|e| {
                    let why = e.unwrap_or_else(|| {
                        format!("completes on the mbarrier at shared byte {a}, which no `mbarrier.init` has initialized (or which `mbarrier.inval` invalidated)")
                    });
                    self.misuse(pc, w, Some(l), &why)
                })?;
            }
            None if on => {
                let tid = w.first_tid + l as u32;
                self.chk.bulk_read(s as u32, s as u32 + n, tid, pc as u32);
            }
            None => {}
        }
        Ok(())
    }
}
