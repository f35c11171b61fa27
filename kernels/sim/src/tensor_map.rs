//! Tensor maps and the tensor form of the bulk copies (the TMA unit's tiled mode, compute
//! capability 9.0), per the PTX ISA ("Tensors", "tensormap.replace", "cp.async.bulk.tensor"):
//!
//! - `tensormap.replace.tile.<field>.{shared::cta,global}.b1024.{b32,b64} [map], {ord,} value`
//!   writes one field of the 128-byte tensor-map object at `map`;
//! - `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.<scope>.sync.aligned
//!   [dst], [src], 128` copies a map built in shared memory to global memory (once a warp: the
//!   whole warp executes it), where the copies read it;
//! - `fence.proxy.tensormap::generic.acquire.<scope> [map], 128` lets the thread's later copies
//!   use the map in global memory (on one simulated device it orders nothing; it is recorded);
//! - `cp.async.bulk.tensor.<n>d.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes
//!   [dst], [map, {c0, ..}], [mbar]` copies the box whose first element is at coordinates
//!   `c0, ..` into shared memory, the box's elements row after row (dimension 0 innermost),
//!   elements outside the tensor read as zeros, and takes the box's bytes off the mbarrier's
//!   transaction count, as a one-dimensional bulk copy does (`bulk`);
//! - `cp.async.bulk.tensor.<n>d.global.shared::cta{.tile}.bulk_group [map, {c0, ..}], [src]`
//!   stores such a box back, skipping its elements outside the tensor, in the thread's bulk
//!   group.
//!
//! A swizzled box (32, 64 or 128 bytes) has 16-byte chunk `c` of each 128-byte line of shared
//! memory at `c ^ (line % 2, 4 or 8)` (the shared address's bits 4-6 XOR its bits 7-9), the
//! layout `wgmma` descriptors name with the same swizzle. The encoding is the simulator's own,
//! written for the maps the kernel declares (`host_maps`, which says what a kernel may do with
//! them: change a valid map's field, never build one from zeros; acquire before a copy).
//! A map the copies cannot use (a rank other than the copy's, a box past 256 elements or not a
//! multiple of 16 bytes a row, an unaligned address or stride) is a `launch_error`, as the
//! GPU's "illegal instruction" is. Not simulated: the im2col, gather and scatter modes,
//! interleaved layouts, element strides other than 1, the NaN fill, and multicast.

use crate::check::Acc;
use crate::fault::{Fault, Located};
use crate::machine::{Machine, Warp};
use crate::memory::{REGION_SHIFT, SHARED_REGION};
use ptx::ir::*;

/// A decoded tensor map, checked for what a tiled copy needs.
#[derive(Clone, Debug)]
pub(super) struct Map {
    pub addr: u64,
    pub rank: usize,
    /// Bytes of an element.
    pub elem: u64,
    pub dims: [u64; RANKS],
    /// Bytes from one index to the next in each dimension (dimension 0: the element).
    pub strides: [u64; RANKS],
    pub boxes: [u64; RANKS],
    /// The swizzle's mask of line bits (0, 1, 3 or 7).
    pub swizzle: u64,
}

/// Why a map's bytes make no map a tiled copy can use: one the GPU refuses too (its illegal
/// instruction), or one the simulator does not copy. The text follows "a tensor map that".
#[derive(Debug, thiserror::Error)]
enum Unusable {
    #[error(
        "has rank {rank} where the copy gives {coords} coordinates (`tensormap.replace.tile.rank` takes the rank less one)"
    )]
    Rank { rank: usize, coords: usize },
    #[error("has swizzle mode {0} (0 none, 1 32 bytes, 2 64 bytes, 3 128 bytes)")]
    SwizzleMode(u64),
    #[error("has global address {0:#x}, which is not 16-byte aligned")]
    Address(u64),
    #[error("has a box of {size} elements in dimension {dim} (at most 256)")]
    Box { size: u64, dim: usize },
    #[error("has a stride of {stride} bytes for dimension {dim} (a positive multiple of 16)")]
    Stride { stride: u64, dim: usize },
    #[error("has a box row of {0} bytes (a multiple of 16)")]
    Row(u64),
    #[error(
        "has box rows of {row} bytes under a {swizzle}-byte swizzle (rows at most the swizzle's width)"
    )]
    SwizzleRow { row: u64, swizzle: u64 },
    /// What the simulator does not copy (a GPU may).
    #[error("{0}")]
    Unsupported(NotSimulated),
}

/// A map the simulator does not copy.
#[derive(Debug, thiserror::Error)]
enum NotSimulated {
    #[error("has element type {0}, which the simulator does not copy")]
    ElemType(u64),
    #[error("is interleaved, which the simulator does not copy")]
    Interleaved,
    #[error(
        "fills elements outside the tensor with NaN, which the simulator does not do (it fills zeros)"
    )]
    NanFill,
    #[error("has an element stride other than 1, which the simulator does not copy")]
    ElementStride,
    #[error(
        "has box rows of {row} bytes under a {swizzle}-byte swizzle; the simulator copies swizzled boxes whose rows are the swizzle's width"
    )]
    NarrowSwizzleRow { row: u64, swizzle: u64 },
}

impl Map {
    /// Reads the object's bytes, for a copy that gives `coords` coordinates.
    fn decode(b: &[u8; MAP_BYTES as usize], coords: usize) -> Result<Map, Unusable> {
        let at = |f: Field, ord: u64| {
            let (o, n) = f.slot(ord);
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(&b[o as usize..o as usize + n]);
            u64::from_le_bytes(v)
        };
        let unsupported = |n: NotSimulated| Err(Unusable::Unsupported(n));
        let rank = at(Field::Rank, 0) as usize + 1;
        if rank != coords {
            return Err(Unusable::Rank { rank, coords });
        }
        let elem = match at(Field::ElemType, 0) {
            0 => 1,
            1 | 6 | 10 => 2,
            2 | 3 | 7 | 8 | 11 | 12 => 4,
            4 | 5 | 9 => 8,
            t => return unsupported(NotSimulated::ElemType(t)),
        };
        if at(Field::Interleave, 0) != 0 {
            return unsupported(NotSimulated::Interleaved);
        }
        if at(Field::Fill, 0) != 0 {
            return unsupported(NotSimulated::NanFill);
        }
        let swizzle = match at(Field::Swizzle, 0) {
            0 => 0,
            1 => 1,
            2 => 3,
            3 => 7,
            s => return Err(Unusable::SwizzleMode(s)),
        };
        let addr = at(Field::Address, 0);
        if addr % 16 != 0 {
            return Err(Unusable::Address(addr));
        }
        let mut m = Map {
            addr,
            rank,
            elem,
            dims: [1; RANKS],
            strides: [elem; RANKS],
            boxes: [1; RANKS],
            swizzle,
        };
        for i in 0..rank {
            let ord = i as u64;
            m.dims[i] = (at(Field::GlobalDim, ord) as u32 as u64) + 1;
            m.boxes[i] = (at(Field::BoxDim, ord) as u32 as u64) + 1;
            if at(Field::ElementStride, ord) as u32 != 0 {
                return unsupported(NotSimulated::ElementStride);
            }
            if m.boxes[i] > 256 {
                return Err(Unusable::Box {
                    size: m.boxes[i],
                    dim: i,
                });
            }
            if i > 0 {
                let s = at(Field::GlobalStride, ord - 1);
                if s % 16 != 0 || s == 0 {
                    return Err(Unusable::Stride { stride: s, dim: i });
                }
                m.strides[i] = s;
            }
        }
        let row = m.boxes[0] * elem;
        if !row.is_multiple_of(16) {
            return Err(Unusable::Row(row));
        }
        let width = 16 * (swizzle + 1);
        if swizzle != 0 && row > width {
            return Err(Unusable::SwizzleRow {
                row,
                swizzle: width,
            });
        }
        if swizzle != 0 && row != width {
            return unsupported(NotSimulated::NarrowSwizzleRow {
                row,
                swizzle: width,
            });
        }
        Ok(m)
    }

    /// Bytes of one box.
    pub fn box_bytes(&self) -> u64 {
        self.boxes[..self.rank].iter().product::<u64>() * self.elem
    }

    /// The box's elements from corner `at`: for each, its shared address from `dst` (swizzled)
    /// and its global address, `None` outside the tensor.
    pub fn elements(&self, dst: u64, at: &[i64]) -> Vec<(u64, Option<u64>)> {
        let n = self.box_bytes() / self.elem;
        let mut out = Vec::with_capacity(n as usize);
        let mut idx = [0u64; RANKS];
        for e in 0..n {
            let s = dst + e * self.elem;
            let s = s ^ (((s >> 7) & self.swizzle) << 4);
            let mut g = Some(self.addr);
            for i in 0..self.rank {
                let c = at[i] + idx[i] as i64;
                g = match g {
                    Some(a) if c >= 0 && (c as u64) < self.dims[i] => {
                        Some(a + c as u64 * self.strides[i])
                    }
                    _ => None,
                };
            }
            out.push((s, g));
            for (ix, &b) in idx.iter_mut().zip(&self.boxes).take(self.rank) {
                *ix += 1;
                if *ix < b {
                    break;
                }
                *ix = 0;
            }
        }
        out
    }
}

impl Machine<'_> {
    /// A tensor-map instruction over the lanes `exec` of warp `w`.
    pub(super) fn tensor_map(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &MapOp,
    ) -> Result<(), Located> {
        let tid0 = w.first_tid;
        let cx = w.ctx(exec, self.executed);
        match *op {
            MapOp::Replace {
                field,
                space,
                addr,
                ord,
                val,
            } => {
                let (addrs, vals) = (cx.addrs(addr), cx.get(val));
                let (off, n) = field.slot(ord);
                for l in (0..32).filter(|l| exec >> l & 1 == 1) {
                    let a = addrs[l];
                    if a % 64 == 0 {
                        self.replace_allowed(w, shared, pc, l, (space, a))?;
                    }
                    if a % 64 != 0 {
                        let detail = format!(
                            "`{}` writes a tensor map at {} {a:#x}, but a tensor map is 64-byte aligned (on a GPU the launch stops with \"misaligned address\")",
                            self.prog.texts[self.prog.insts[pc].text as usize],
                            space.name()
                        );
                        return Err(self.fault(
                            Fault::Misaligned { detail },
                            Some(pc),
                            Some(w),
                            Some(l),
                        ));
                    }
                    let v = field.encode(vals[l]);
                    let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
                    if let Err(mem) = sp.store(space, a + off, n, v, l) {
                        return Err(self.fault(
                            Fault::OutOfBounds { write: true, mem },
                            Some(pc),
                            Some(w),
                            Some(l),
                        ));
                    }
                }
            }
            MapOp::Acquire { addr, sys } => self.acquire(tid0, exec, &cx.addrs(addr), sys),
            MapOp::Publish { dst, src } => {
                // The whole warp executes it, and it copies once.
                let l = exec.trailing_zeros() as usize;
                let (d, s) = (cx.addrs(dst)[l], cx.addrs(src)[l]);
                let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
                let copied = (0..MAP_BYTES).step_by(8).try_for_each(|i| {
                    let v = sp
                        .load(Space::Shared, s + i, 8, l)
                        .map_err(|e| (e, false))?;
                    sp.store(Space::Global, d + i, 8, v, l)
                        .map_err(|e| (e, true))
                });
                copied.map_err(|e| self.copy_fault(e, pc, w, l))?;
            }
        }
        Ok(())
    }

    /// The tensor map at generic address `a`, read by lane `l`; a map the copy cannot use is
    /// the launch error (or the unsupported feature) it names.
    pub(super) fn read_map(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        pc: usize,
        l: usize,
        a: u64,
        coords: usize,
    ) -> Result<Map, Located> {
        let bad = |m: &Self, w: &Warp, why: String| {
            let text = &m.prog.texts[m.prog.insts[pc].text as usize];
            let detail = format!(
                "`{text}` copies with a tensor map that {why}: on a GPU the launch stops with \"an illegal instruction was encountered\""
            );
            m.fault(Fault::BadTensorMap { detail }, Some(pc), Some(w), Some(l))
        };
        if a >> REGION_SHIFT == SHARED_REGION {
            return Err(bad(self, w, "is in shared memory (a copy reads its map from global memory: build it in shared memory, then copy it out with `tensormap.cp_fenceproxy`)".into()));
        }
        if !a.is_multiple_of(64) {
            return Err(bad(self, w, format!("is at {a:#x}, not 64-byte aligned")));
        }
        let mut b = [0u8; MAP_BYTES as usize];
        {
            let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
            for i in (0..MAP_BYTES).step_by(8) {
                match sp.load_as(Space::Generic, a + i, 8, l, Acc::Quiet) {
                    Ok(v) => b[i as usize..i as usize + 8].copy_from_slice(&v.to_le_bytes()),
                    Err(mem) => {
                        return Err(self.fault(
                            Fault::OutOfBounds { write: false, mem },
                            Some(pc),
                            Some(w),
                            Some(l),
                        ));
                    }
                }
            }
        }
        if let Some(why) = self.unusable(w, l, a, &b) {
            let text = &self.prog.texts[self.prog.insts[pc].text as usize];
            let detail = format!("`{text}` {why}");
            return Err(self.fault(Fault::BadTensorMap { detail }, Some(pc), Some(w), Some(l)));
        }
        let map = match Map::decode(&b, coords) {
            Ok(m) => m,
            Err(Unusable::Unsupported(why)) => {
                let text = &self.prog.texts[self.prog.insts[pc].text as usize];
                let what = format!("`{text}` (its tensor map {why})");
                return Err(self.fault(Fault::Unsupported { what }, Some(pc), Some(w), Some(l)));
            }
            Err(why) => return Err(bad(self, w, why.to_string())),
        };
        Ok(map)
    }

    /// A tensor copy (`BulkOp::TensorLoad` or `TensorStore`) over the lanes `exec` of warp `w`,
    /// in lane order: its elements move as the issuing thread's accesses, as a bulk copy's do.
    pub(super) fn bulk_tensor(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &ptx::ir::BulkOp,
    ) -> Result<(), Located> {
        use ptx::ir::BulkOp;
        let (mem, map, coords, mbar, load) = match op {
            BulkOp::TensorLoad {
                dst,
                map,
                coords,
                mbar,
            } => (*dst, *map, coords, Some(*mbar), true),
            BulkOp::TensorStore { map, coords, src } => (*src, *map, coords, None, false),
            _ => unreachable!("bulk_tensor runs the tensor forms"),
        };
        let (mems, maps, at, bars) = {
            let cx = w.ctx(exec, self.executed);
            let at: Vec<[u64; 32]> = coords.iter().map(|&c| cx.get(c)).collect();
            (cx.addrs(mem), cx.addrs(map), at, mbar.map(|a| cx.addrs(a)))
        };
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            let m = self.read_map(w, shared, pc, l, maps[l], coords.len())?;
            let s = mems[l];
            if s % 128 != 0 {
                let detail = format!(
                    "`{}` copies a box {} shared byte {s}, but a tensor copy's shared memory is 128-byte aligned (on a GPU the launch stops with \"misaligned address\")",
                    self.prog.texts[self.prog.insts[pc].text as usize],
                    if load { "to" } else { "from" }
                );
                return Err(self.fault(Fault::Misaligned { detail }, Some(pc), Some(w), Some(l)));
            }
            let corner: Vec<i64> = at.iter().map(|c| c[l] as u32 as i32 as i64).collect();
            let n = m.elem as usize;
            let moved = {
                let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
                m.elements(s, &corner).into_iter().try_for_each(|(sa, ga)| {
                    if load {
                        // The global side is read quietly: inputs, not one thread's work.
                        let v = match ga {
                            Some(g) => sp
                                .load_as(Space::Global, g, n, l, Acc::Quiet)
                                .map_err(|e| (e, false))?,
                            None => 0,
                        };
                        sp.store(Space::Shared, sa, n, v, l).map_err(|e| (e, true))
                    } else if let Some(g) = ga {
                        let v = sp.load(Space::Shared, sa, n, l).map_err(|e| (e, false))?;
                        sp.store(Space::Global, g, n, v, l).map_err(|e| (e, true))
                    } else {
                        Ok(())
                    }
                })
            };
            moved.map_err(|e| self.copy_fault(e, pc, w, l))?;
            self.bulk_done(
                w,
                shared,
                pc,
                l,
                bars.map(|b| b[l]),
                (s, m.box_bytes() as u32),
            )?;
        }
        Ok(())
    }
}
