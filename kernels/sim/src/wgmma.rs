//! Hopper's warpgroup matrix multiply (`wgmma`, sm_90a): `wgmma.fence`, `wgmma.commit_group`,
//! `wgmma.wait_group n` and `wgmma.mma_async.sync.aligned.m64nNk{8,16}.f32.{tf32,f16,bf16}`,
//! with A from a shared-memory matrix descriptor or from registers and B from a descriptor.
//!
//! A warpgroup is four consecutive warps; warp `w` of it (`w` = warp index modulo 4) holds rows
//! 16w..16w+15 of the 64 x N result. Its D fragment is `mma.sync`'s C/D layout repeated per 8
//! columns (register i: row g + 8 ((i % 4) / 2), column 8 (i / 4) + 2t + i % 2, with g = lane / 4
//! and t = lane % 4), and its A fragment from registers is `mma.sync`'s A for its 16 rows. A
//! warp's part of the product needs only its own rows of A and all of B, so each warp executes
//! its own instruction.
//!
//! The op is asynchronous, and modelled as the H100 runs it: `mma_async` reads its descriptors
//! and the scale-d predicate when issued, and is kept with the warp, tagged with the warp's open
//! group; it runs (reading A's registers, the accumulators and shared memory, writing D) when a
//! `wgmma.wait_group n` retires its group (all but the `n` most recently committed). Shared
//! memory is therefore read late: a kernel that overwrites the tile it multiplies before waiting
//! gets the new values (and a race at the `mma_async` line). Registers are not: `ptxas` makes any
//! other instruction that names an in-flight accumulator or A register wait for the
//! warpgroup's wgmma's first (a `WARPGROUP.DEPBAR` in the SASS; measured: D stored between
//! `commit_group` and `wait_group` is the final result on the H100), so such an instruction
//! (`Inst::wgmma_sync`, found at decode) retires every op in flight of its warp before it runs.
//! Ops still in flight when the warp exits are dropped (nothing can read their result).
//! Shared-memory reads go through the checked path at the `mma_async` line, on behalf of the
//! lane 4 (r % 8) + k % 4 for A's element (r, k) of the warp's rows and 4 (n % 8) + k % 4 for
//! B's (k, n), as in `mma.sync`'s tf32 fragments.
//!
//! Descriptor (PTX ISA "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 leading
//! byte offset >> 4, 32-45 stride byte offset >> 4, 49-51 base offset, 62-63 swizzle (0 none,
//! 1 128-byte, 2 64-byte, 3 32-byte). Only K-major operands (tf32 allows no other): row r of the
//! tile (an M row of A, an N column of B) and its 16-byte chunk c of the k-slice (32 bytes) lie
//! at `start + (r % 8) * 16 W + (r / 8) * SBO + c * (LBO unswizzled, 16 swizzled)`, W being 1,
//! 2, 4 or 8 chunks per row for none, 32, 64 and 128 bytes; swizzling then XORs address bits
//! 4.. with bits 7.. (1, 2 or 3 bits), on the shared address itself as the hardware does.

use crate::fault::{Fault, Located};
use crate::lanes::Lanes;
use crate::machine::WgmmaPending as Pending;
use crate::machine::{Machine, Warp};
use crate::memory::Spaces;
use crate::mma_num::ElemValue;
use crate::mma_num::{Elem, MODEL, dot_add};
use crate::mma_step::{a_matrix, c_at};
use ptx::ir::*;

/// The shared address of element (row, k) of a K-major tile under descriptor `desc`.
fn element_addr(desc: u64, elem: Elem, row: usize, k: usize) -> u64 {
    let field = |at: u32| (desc >> at & 0x3fff) << 4;
    let (start, lbo, sbo) = (field(0), field(16), field(32));
    let swz_bits = match desc >> 62 {
        1 => 3,
        2 => 2,
        3 => 1,
        _ => 0,
    };
    let bytes = (k * elem.bits() as usize / 8) as u64;
    let (chunk, within) = (bytes / 16, bytes % 16);
    let row = row as u64;
    let chunk_off = if swz_bits == 0 { lbo } else { 16 };
    let a = start + (row % 8) * (16 << swz_bits) + (row / 8) * sbo + chunk * chunk_off + within;
    let mask = (1u64 << swz_bits) - 1;
    a ^ ((a >> 7 & mask) << 4)
}

impl Machine<'_> {
    /// A `wgmma` instruction of the warp `w` (all its lanes in `exec`).
    pub(super) fn wgmma(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &WgOp,
    ) -> Result<(), Located> {
        match op {
            WgOp::Fence => Ok(()),
            WgOp::Commit => {
                w.wg_open += 1;
                Ok(())
            }
            &WgOp::Wait { keep } => self.wgmma_retire(w, shared, |g, open| g + keep < open),
            WgOp::Mma { a, b, scale_d, .. } => {
                let group = w.wg_open;
                let cx = w.ctx(exec, self.executed);
                let whole = crate::mma_step::whole_warp(&cx, "wgmma.mma_async");
                let pending = Pending {
                    group,
                    pc: pc as u32,
                    a_desc: match a {
                        AFrom::Desc(s) => cx.get(*s)[0],
                        AFrom::Regs(_) => 0,
                    },
                    b_desc: cx.get(*b)[0],
                    scale_d: cx.pred(*scale_d) & 1 == 1,
                };
                if let Err((mut fault, lane)) = whole {
                    self.name_missing_lanes(&mut fault, w, exec, pc as u32);
                    return Err(self.fault(fault, Some(pc), Some(w), lane));
                }
                w.wgmma.push(pending);
                Ok(())
            }
        }
    }

    /// Runs the warp's ops in flight whose group `g` passes `due(g, open group)`, in order.
    pub(super) fn wgmma_retire(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        due: impl Fn(u32, u32) -> bool,
    ) -> Result<(), Located> {
        if w.wgmma.is_empty() {
            return Ok(());
        }
        let open = w.wg_open;
        let (now, later): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut w.wgmma)
            .into_iter()
            .partition(|p| due(p.group, open));
        w.wgmma = later;
        for p in now {
            let pc = p.pc as usize;
            let Op::Wgmma(op) = &self.prog.insts[pc].op else {
                continue;
            };
            if let Err((fault, lane)) = self.wgmma_run(w, shared, &p, op) {
                return Err(self.fault(fault, Some(pc), Some(w), lane));
            }
        }
        Ok(())
    }

    fn wgmma_run(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        p: &Pending,
        op: &WgOp,
    ) -> Result<(), (Fault, Option<usize>)> {
        let WgOp::Mma {
            elem,
            n,
            ref d,
            ref a,
            neg_a,
            neg_b,
            ..
        } = *op
        else {
            return Ok(());
        };
        let a_desc = matches!(a, AFrom::Desc(_)).then_some(("A", p.a_desc));
        for (what, desc) in a_desc.into_iter().chain([("B", p.b_desc)]) {
            if desc >> 49 & 7 != 0 {
                return Err((
                    Fault::Unsupported {
                        what: format!(
                            "`wgmma` with a nonzero base offset in {what}'s matrix descriptor (tiles must start at their swizzle pattern's alignment)"
                        ),
                    },
                    Some(0),
                ));
            }
        }
        if self.chk.budgets.products.on {
            self.chk
                .budgets
                .products
                .tensor(ptx::ir::wgmma_warp_macs(elem, n));
        }
        let k = elem.k() as usize;
        let n = n as usize;
        let rank = (w.first_tid / 32 % 4) as usize;
        let mut sp = self.spaces(shared, &mut w.local, w.first_tid, p.pc as usize);
        let size = elem.bits() as usize / 8;
        let sign_b = if neg_b { -1.0 } else { 1.0 };
        let read = |sp: &mut Spaces, desc: u64, row: usize, j: usize, lane: usize| {
            sp.load(Space::Shared, element_addr(desc, elem, row, j), size, lane)
                .map(|v| elem.value(v as u32))
                .map_err(|mem| (Fault::OutOfBounds { write: false, mem }, Some(lane)))
        };
        // B is the warpgroup's operand. Each warp reads all of it here, the hardware once, so an
        // observer (a profile) sees the first warp's reads only; the checks see every warp's.
        let mut bmat = vec![[0.0f64; 16]; n];
        sp.unobserved = rank != 0;
        let b_read = bmat.iter_mut().enumerate().try_for_each(|(col, bc)| {
            for (j, x) in bc.iter_mut().enumerate().take(k) {
                *x = sign_b * read(&mut sp, p.b_desc, col, j, (col % 8) * 4 + j % 4)?;
            }
            Ok(())
        });
        sp.unobserved = false;
        b_read?;
        let mut amat = match a {
            AFrom::Desc(_) => {
                let mut amat = [[0.0f64; 16]; 16];
                for (r, ar) in amat.iter_mut().enumerate() {
                    for (j, x) in ar.iter_mut().enumerate().take(k) {
                        *x = read(&mut sp, p.a_desc, 16 * rank + r, j, (r % 8) * 4 + j % 4)?;
                    }
                }
                amat
            }
            AFrom::Regs(regs) => {
                let cx = w.ctx(u32::MAX, 0);
                a_matrix(elem, k, &regs.map(|s| cx.get(s)))
            }
        };
        if neg_a {
            amat.iter_mut().flatten().for_each(|x| *x = -*x);
        }
        // D's 16 rows: mma.sync's C/D layout for each 8 columns, four registers a column block.
        let mut cx = w.ctx(u32::MAX, 0);
        let old: Vec<Lanes> = d.iter().map(|&s| cx.get(Src::Reg(s))).collect();
        let mut out = vec![[0u64; 32]; d.len()];
        for (row, arow) in amat.iter().enumerate() {
            for (col, bcol) in bmat.iter().enumerate() {
                let (l, i) = c_at(row, col % 8);
                let i = 4 * (col / 8) + i;
                let acc = if p.scale_d {
                    f32::from_bits(old[i][l] as u32)
                } else {
                    0.0
                };
                let v = dot_add(&arow[..k], &bcol[..k], acc, elem, MODEL);
                out[i][l] = u64::from(v.to_bits());
            }
        }
        for (&slot, o) in d.iter().zip(&out) {
            cx.put(slot, o);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(start: u64, lbo: u64, sbo: u64, swz: u64) -> u64 {
        (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | swz << 62
    }

    #[test]
    fn unswizzled_core_matrices() {
        // 8 rows of 16 bytes each, the second chunk LBO away, the next 8 rows SBO away.
        let d = desc(1024, 128, 256, 0);
        assert_eq!(element_addr(d, Elem::Tf32, 0, 0), 1024);
        assert_eq!(element_addr(d, Elem::Tf32, 1, 1), 1024 + 16 + 4);
        assert_eq!(element_addr(d, Elem::Tf32, 0, 5), 1024 + 128 + 4);
        assert_eq!(element_addr(d, Elem::Tf32, 9, 0), 1024 + 256 + 16);
        assert_eq!(element_addr(d, Elem::F16, 0, 9), 1024 + 128 + 2);
    }

    #[test]
    fn swizzles_xor_the_chunk_with_the_row() {
        // 128-byte rows: row r's chunk c sits at chunk c ^ (r % 8).
        let d = desc(0, 16, 1024, 1);
        for r in 0..16u64 {
            for c in 0..2u64 {
                let want = (r / 8) * 1024 + (r % 8) * 128 + 16 * (c ^ (r % 8)) + 4;
                assert_eq!(
                    element_addr(d, Elem::Tf32, r as usize, 4 * c as usize + 1),
                    want
                );
            }
        }
        // 32-byte rows: chunk c ^ ((r / 4) % 2).
        let d = desc(0, 16, 256, 3);
        assert_eq!(element_addr(d, Elem::Tf32, 4, 0), 4 * 32 + 16);
        assert_eq!(element_addr(d, Elem::Tf32, 3, 4), 3 * 32 + 16);
        // 64-byte rows: chunk c ^ ((r / 2) % 4), the k-slice 32 bytes on.
        let d = desc(32, 16, 512, 2);
        assert_eq!(element_addr(d, Elem::Tf32, 2, 0), 2 * 64 + 32 + 16);
    }
}
