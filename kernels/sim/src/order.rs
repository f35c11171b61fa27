//! Happens-before among the warps of a block, for the race check: a vector clock per warp (one
//! entry per warp of the block), as in the classic race detectors (FastTrack's epochs, here per
//! warp).
//!
//! Every shared access is stamped with its warp's own entry. A release (arriving at a named
//! barrier, arriving on an `mbarrier`) adds the warp's clock into the synchronization object's
//! and then advances the warp's own entry, so what the warp does after arriving is not ordered
//! by it; an acquire (leaving a named barrier it waited at, an `mbarrier` wait that saw its
//! phase complete) joins the object's clock into the warp's. Access `a` of warp `x` (stamp `c`)
//! happens before whatever warp `y` does now when `x != y` and `y`'s entry for `x` is at least
//! `c`. Lanes of one warp are ordered by `__syncwarp()` instead (`check`; `named` and `mbarrier`
//! count the lanes that arrive or wait together as one); `__syncthreads()` still ends an epoch
//! there, which orders everything before it.

/// The clocks of one block's warps.
#[derive(Clone, Default)]
pub struct Order {
    warps: usize,
    /// `warps` rows of `warps` entries: row `y` is what warp `y` has seen of each warp.
    vc: Vec<u32>,
}

/// A synchronization object's clock: the join of what its releasers had done.
pub type Clock = Vec<u32>;

impl Order {
    /// Fresh clocks for `warps` warps: each has done step 1 of its own, seen nothing of others.
    pub fn reset(&mut self, warps: usize) {
        self.warps = warps;
        self.vc.clear();
        self.vc.resize(warps * warps, 0);
        for w in 0..warps {
            self.vc[w * warps + w] = 1;
        }
    }

    /// The stamp of an access by thread `tid` now.
    #[inline]
    pub fn stamp(&self, tid: u32) -> u32 {
        let w = tid as usize / 32;
        self.vc.get(w * self.warps + w).copied().unwrap_or(0)
    }

    /// Whether an access by thread `a` stamped `c` happens before any access by thread `b` now
    /// (through synchronization between their warps).
    #[inline]
    pub fn before(&self, a: u32, c: u32, b: u32) -> bool {
        let (x, y) = (a as usize / 32, b as usize / 32);
        x != y && self.vc.get(y * self.warps + x).is_some_and(|&s| s >= c)
    }

    /// Warp `w` releases into `into`: `into` joins its clock, then its own entry advances.
    pub fn release(&mut self, w: usize, into: &mut Clock) {
        if w >= self.warps {
            return;
        }
        into.resize(self.warps, 0);
        let row = &mut self.vc[w * self.warps..(w + 1) * self.warps];
        for (i, r) in into.iter_mut().zip(row.iter()) {
            *i = (*i).max(*r);
        }
        row[w] += 1;
    }

    /// Warp `w` acquires `from`: its clock joins it.
    pub fn acquire(&mut self, w: usize, from: &Clock) {
        if w >= self.warps {
            return;
        }
        let row = &mut self.vc[w * self.warps..(w + 1) * self.warps];
        for (r, f) in row.iter_mut().zip(from.iter()) {
            *r = (*r).max(*f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_then_acquire_orders_only_what_came_before() {
        let mut o = Order::default();
        o.reset(2);
        let before = o.stamp(0);
        let mut bar = Clock::new();
        o.release(0, &mut bar);
        let after = o.stamp(0);
        assert!(!o.before(0, before, 32));
        o.acquire(1, &bar);
        assert!(o.before(0, before, 32));
        assert!(
            !o.before(0, after, 32),
            "warp 0's accesses after its release"
        );
        assert!(
            !o.before(0, before, 1),
            "lanes of one warp are not ordered here"
        );
    }
}
