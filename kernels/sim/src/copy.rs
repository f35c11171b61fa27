//! `cp.async`: copies from global to shared memory that land when the copying thread waits.
//!
//! A thread's `cp.async` reads its global bytes at once (they are inputs, which no kernel here
//! writes) and keeps them with the warp, tagged with the thread's open group; `commit_group`
//! closes that group, and `wait_group n` (or `wait_all`) writes the thread's copies of every group
//! but the `n` most recently committed into shared memory, as that thread's stores at the copy's
//! own instruction. The checks hold the rest of the window in which a GPU may land them
//! (`inflight`): from its issue on, a copy's destination is written as far as other threads are
//! concerned, so another thread touching it before the wait and a barrier (or in the epoch of
//! the issue, not ordered before it) races with the copy, at both lines. A thread that reads its
//! own copy before waiting reads what was there before. A thread
//! that exits with copies outstanding has them land then (a GPU finishes them as well).

use crate::fault::Located;
use crate::machine::CopyPending as Pending;
use crate::machine::{Machine, Warp};
use ptx::ir::*;

impl Machine<'_> {
    /// `cp.async` in each executing lane: bounds of both sides checked now, source read now.
    pub(super) fn cp_async(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        pc: usize,
        op: &Op,
    ) -> Result<(), Located> {
        let Op::CpAsync {
            size,
            dst,
            src,
            src_size,
            ignore_src,
        } = *op
        else {
            return Ok(());
        };
        // Per lane: the two addresses and the bytes to read from the source.
        let (dsts, srcs, valid) = {
            let cx = w.ctx(exec, self.executed);
            let valid = match (src_size, ignore_src) {
                (Some(s), _) => cx.get(s),
                (_, Some(p)) => {
                    let ignored = cx.pred(p);
                    std::array::from_fn(|l| u64::from(size) * u64::from(ignored >> l & 1 == 0))
                }
                _ => [u64::from(size); 32],
            };
            (cx.addrs(dst), cx.addrs(src), valid)
        };
        let mut copies = Vec::new();
        let result = {
            let mut sp = self.spaces(shared, &mut w.local, w.first_tid, pc);
            (0..32).filter(|l| exec >> l & 1 == 1).try_for_each(|l| {
                sp.load_as(
                    Space::Shared,
                    dsts[l],
                    size as usize,
                    l,
                    crate::check::Acc::Quiet,
                )
                .map_err(|e| (e, l, true))?;
                // Whole words as 4-byte reads (what the access budgets count), a partial one by bytes.
                let mut bytes = [0u8; 16];
                let n = valid[l].min(u64::from(size)) as usize;
                let mut i = 0;
                while i < n {
                    let k = if n - i >= 4 { 4 } else { 1 };
                    let v = sp
                        .load(Space::Global, srcs[l].wrapping_add(i as u64), k, l)
                        .map_err(|e| (e, l, false))?;
                    bytes[i..i + k].copy_from_slice(&v.to_le_bytes()[..k]);
                    i += k;
                }
                copies.push((l, bytes));
                Ok(())
            })
        };
        if let Err((mem, l, write)) = result {
            return Err(self.copy_fault((mem, write), pc, w, l));
        }
        for (l, bytes) in copies {
            // A `.shared` address is the byte offset in the block's shared memory.
            let tid = w.first_tid + l as u32;
            self.chk
                .async_issue(dsts[l] as usize, size as usize, tid, pc as u32);
            w.copies.push(Pending {
                lane: l as u8,
                group: w.groups[l],
                pc: pc as u32,
                dst: dsts[l],
                bytes,
                size: size as u8,
            });
        }
        Ok(())
    }

    /// `commit_group` and `wait_group`/`wait_all` in each executing lane.
    pub(super) fn cp_async_group(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        exec: u32,
        commit: bool,
        wait: Option<u32>,
    ) -> Result<(), Located> {
        if commit {
            for (l, g) in w.groups.iter_mut().enumerate() {
                *g += exec >> l & 1;
            }
        }
        match wait {
            Some(keep) => self.land(w, shared, exec, |g, open| g + keep < open),
            None => Ok(()),
        }
    }

    /// Writes the copies of the lanes in `lanes` whose group `g` passes `due(g, open group)`.
    pub(super) fn land(
        &mut self,
        w: &mut Warp,
        shared: &mut [u8],
        lanes: u32,
        due: impl Fn(u32, u32) -> bool,
    ) -> Result<(), Located> {
        if w.copies.is_empty() {
            return Ok(());
        }
        let (now, later): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut w.copies)
            .into_iter()
            .partition(|c| lanes >> c.lane & 1 == 1 && due(c.group, w.groups[c.lane as usize]));
        w.copies = later;
        for c in now {
            let l = c.lane as usize;
            let mut sp = self.spaces(shared, &mut w.local, w.first_tid, c.pc as usize);
            let stored = c.bytes[..c.size as usize]
                .chunks_exact(4)
                .enumerate()
                .try_for_each(|(i, b)| {
                    let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    sp.store(Space::Shared, c.dst + 4 * i as u64, 4, u64::from(v), l)
                });
            if let Err(mem) = stored {
                return Err(self.fault(
                    crate::fault::Fault::OutOfBounds { write: true, mem },
                    Some(c.pc as usize),
                    Some(w),
                    Some(l),
                ));
            }
        }
        Ok(())
    }
}
