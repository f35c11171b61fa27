//! Asynchronous copies in flight, for the race check: the shared words a `cp.async` copy may
//! write at any moment between its issue and the wait of its own thread that covers it, and the
//! shared destinations of bulk copies (`cp.async.bulk`, tensor form included) until a wait on the
//! mbarrier phase that counts their bytes orders an access after them.
//!
//! The executor lands a copy's bytes when its thread waits (`copy`), which is one moment of the
//! window a GPU may pick; the check must hold every other moment too. So a copy marks its
//! destination words here when it is issued (with its thread and instruction), and its landing
//! (the same thread's write at the copy's own instruction) clears them. An access by any other
//! thread to a marked word is a race with the copy: it came after the issue in the simulated run,
//! so nothing orders it before the copy, and the copy's thread has not waited yet, so nothing
//! orders it after. That is the double buffer whose trailing `__syncthreads()` is missing: a fast
//! warp refills the stage a slow warp still reads. The reads made before the issue in the same
//! barrier epoch are `check`'s (`Checks::async_issue`).
//!
//! A bulk copy into shared memory (`bulk`) lands at any moment until the phase of its mbarrier
//! that counts its bytes completes, and only a thread that waited on that phase (`try_wait` or
//! `test_wait` true) is ordered after it. So its destination is marked with the mbarrier and
//! phase ([`BulkLoad`]); each successful wait on that phase adds its warp, lanes and clocks; an
//! access of a marked word by a thread ordered after none of those waits (the waiting lanes
//! themselves, lanes past a later `__syncwarp()`, warps ordered after the wait through a named
//! barrier or an mbarrier, `order`) is a race with the copy, a write included. A
//! `__syncthreads()` after a wait orders every thread after it: the copy is dropped then, as it is
//! when a later copy writes the same words. A double buffer that skips the wait, or reads a stage
//! after a barrier that no wait preceded, is found so, though the executor lands the bytes at the
//! issue. With no copy in flight, an access pays one test of a counter and a length.

/// The words of one block's shared memory under copies in flight.
#[derive(Default)]
pub(super) struct InFlight {
    /// Per shared word: 0, or the copying thread (block-linear) plus one, and the copy's
    /// instruction.
    words: Vec<(u32, u32)>,
    /// Marked words.
    live: u32,
    /// Bulk copies into shared memory in flight.
    bulk: Vec<BulkLoad>,
}

/// A bulk copy into shared memory in flight: its words `[lo, hi)`, its thread (block-linear) and
/// instruction, the mbarrier (shared byte) and phase that count its bytes, and the waits that saw
/// that phase complete.
pub(super) struct BulkLoad {
    pub lo: u32,
    pub hi: u32,
    pub tid: u32,
    pub inst: u32,
    pub bar: u32,
    pub phase: u32,
    pub seen: Vec<Seen>,
}

/// The lanes `lanes` of warp `warp` waited on a bulk copy's phase, when the warp's `__syncwarp()`
/// count was `seq` and its clock stamp `clk` (`check::Checks::ordered`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Seen {
    pub warp: u32,
    pub lanes: u32,
    pub seq: u32,
    pub clk: u32,
}

/// Bulk copies in flight kept at most (a kernel that never waits drops its oldest).
const BULK_CAP: usize = 256;

impl InFlight {
    /// A new block: nothing in flight.
    pub fn reset(&mut self) {
        if self.live != 0 {
            self.words.iter_mut().for_each(|w| *w = (0, 0));
            self.live = 0;
        }
        self.bulk.clear();
    }

    /// Whether any copy is in flight.
    #[inline(always)]
    pub fn any(&self) -> bool {
        self.live != 0 || !self.bulk.is_empty()
    }

    /// A bulk copy into shared bytes `[lo, hi)` was issued, counted on mbarrier `bar`'s phase
    /// `phase`: the copies it writes over are gone (their conflicts with its writes were checked
    /// as it landed), and it is in flight.
    pub fn bulk_issue(
        &mut self,
        (lo, hi): (u32, u32),
        tid: u32,
        inst: u32,
        (bar, phase): (u32, u32),
    ) {
        self.bulk.retain(|c| c.hi <= lo || hi <= c.lo);
        if self.bulk.len() >= BULK_CAP {
            self.bulk.remove(0);
        }
        self.bulk.push(BulkLoad {
            lo,
            hi,
            tid,
            inst,
            bar,
            phase,
            seen: vec![],
        });
    }

    /// Lanes of a warp saw phase `phase` of mbarrier `bar` complete (`s`): every copy counted on
    /// it or on an earlier phase is ordered before them.
    pub fn bulk_seen(&mut self, bar: u32, phase: u32, s: Seen) {
        for c in self
            .bulk
            .iter_mut()
            .filter(|c| c.bar == bar && c.phase <= phase)
        {
            match c.seen.iter_mut().find(|e| e.warp == s.warp) {
                Some(e) => e.lanes |= s.lanes,
                None => c.seen.push(s),
            }
        }
    }

    /// Whether a bulk copy into shared memory is in flight.
    pub fn bulk_any(&self) -> bool {
        !self.bulk.is_empty()
    }

    /// A barrier of the whole block: every copy some thread waited for is ordered before
    /// everything after it.
    pub fn bulk_barrier(&mut self) {
        self.bulk.retain(|c| c.seen.is_empty());
    }

    /// An access of shared bytes `[lo, hi)`: the bulk copy in flight there that it is ordered
    /// after none of the waits of (`after`), if any (thread, instruction).
    pub fn bulk_touch(
        &self,
        (lo, hi): (u32, u32),
        after: impl Fn(&Seen) -> bool,
    ) -> Option<(u32, u32)> {
        self.bulk
            .iter()
            .find(|c| lo < c.hi && c.lo < hi && !c.seen.iter().any(&after))
            .map(|c| (c.tid, c.inst))
    }

    /// Copy `inst` of thread `tid` will write shared word `word` (of `words` in the block):
    /// marks it, and returns a copy already in flight there (thread, instruction): another
    /// thread's, or one of its own not yet landed (two copies of one thread, neither waited for,
    /// are unordered: the PTX ISA orders `cp.async` operations only through their waits).
    pub fn issue(&mut self, word: usize, words: usize, tid: u32, inst: u32) -> Option<(u32, u32)> {
        if self.words.len() < words {
            self.words.resize(words, (0, 0));
        }
        let w = self.words.get_mut(word)?;
        let other = (w.0 != 0).then(|| (w.0 - 1, w.1));
        if w.0 == 0 {
            self.live += 1;
        }
        *w = (tid + 1, inst);
        other
    }

    /// An access of shared words `[lo, hi)` by thread `tid` at `inst` (`write`: a store): the
    /// copy of another thread in flight there, if any (thread, instruction). The copy's own
    /// landing (its thread's store at its instruction) clears the mark.
    #[inline]
    pub fn touch(
        &mut self,
        (lo, hi): (usize, usize),
        tid: u32,
        inst: u32,
        write: bool,
    ) -> Option<(u32, u32)> {
        let hi = hi.min(self.words.len());
        let mut other = None;
        for w in self.words.get_mut(lo..hi)? {
            if w.0 == 0 {
                continue;
            }
            if w.0 != tid + 1 {
                other.get_or_insert((w.0 - 1, w.1));
            } else if write && w.1 == inst {
                *w = (0, 0);
                self.live -= 1;
            }
        }
        other
    }
}

/// Bulk stores (`cp.async.bulk` from shared to global memory, tensor form included) still
/// running: the shared sources they still read, each thread's count of committed bulk groups,
/// whether a store is moving its bytes now (its global writes are its destination), and the
/// global elements (buffer, element) they still write, with their thread (block-linear),
/// instruction and bulk group (0: not committed yet). A store reads its source until its thread
/// waits for its group with `.read`, and writes its destination until a wait without it.
#[derive(Default)]
pub(super) struct BulkStores {
    reads: Vec<BulkRead>,
    groups: Vec<u32>,
    pub(super) storing: bool,
    writes: std::collections::HashMap<(u32, u32), (u32, u32, u32)>,
}

/// The shared source `[lo, hi)` of a bulk store by thread `tid` at `inst`, in its bulk group
/// `group` (0: not committed yet).
#[derive(Clone, Copy)]
pub(super) struct BulkRead {
    pub(super) lo: u32,
    pub(super) hi: u32,
    pub(super) tid: u32,
    pub(super) inst: u32,
    group: u32,
}

impl BulkStores {
    pub(super) fn new(tpb: u32) -> Self {
        BulkStores {
            groups: vec![0; tpb as usize],
            ..Default::default()
        }
    }

    /// A new block: no store running.
    pub(super) fn reset(&mut self) {
        self.reads.clear();
        self.groups.iter_mut().for_each(|g| *g = 0);
        self.writes.clear();
    }

    /// Bulk store `inst` of thread `tid` reads shared bytes `[lo, hi)` until its group is
    /// waited for: the thread's open group.
    pub(super) fn read(&mut self, lo: u32, hi: u32, tid: u32, inst: u32) {
        self.reads.push(BulkRead {
            lo,
            hi,
            tid,
            inst,
            group: 0,
        });
    }

    /// `cp.async.bulk.commit_group` by thread `tid`: its open group is committed.
    pub(super) fn commit(&mut self, tid: u32) {
        let Some(n) = self.groups.get_mut(tid as usize) else {
            return;
        };
        *n += 1;
        let n = *n;
        for r in self
            .reads
            .iter_mut()
            .filter(|r| r.tid == tid && r.group == 0)
        {
            r.group = n;
        }
        for w in self.writes.values_mut() {
            if w.0 == tid && w.2 == 0 {
                w.2 = n;
            }
        }
    }

    /// `cp.async.bulk.wait_group{.read} keep` by thread `tid`: its committed groups but the
    /// `keep` latest are done reading, and done writing too without `.read`.
    pub(super) fn wait(&mut self, tid: u32, keep: u32, read: bool) {
        let n = self.groups.get(tid as usize).copied().unwrap_or(0);
        let done = |t: u32, group: u32| t == tid && group != 0 && group + keep <= n;
        self.reads.retain(|r| !done(r.tid, r.group));
        if !read && !self.writes.is_empty() {
            self.writes.retain(|_, w| !done(w.0, w.2));
        }
    }

    /// Whether a store still reads shared memory.
    #[inline(always)]
    pub(super) fn reading(&self) -> bool {
        !self.reads.is_empty()
    }

    /// A write of shared bytes `[lo, hi)`: the first store still reading them, no longer
    /// watched (a race is reported once per store).
    pub(super) fn overwritten(&mut self, lo: u32, hi: u32) -> Option<BulkRead> {
        let i = self.reads.iter().position(|r| lo < r.hi && r.lo < hi)?;
        Some(self.reads.swap_remove(i))
    }

    /// Whether a global access must be looked at: a store is moving its bytes or still writes.
    #[inline(always)]
    pub(super) fn writing(&self) -> bool {
        !self.writes.is_empty() || self.storing
    }

    /// A global write of element `at` (buffer, element) by thread `tid` at `inst`: a store's,
    /// while one is moving its bytes (then `None`); otherwise the store still writing the
    /// element, if any (its thread and instruction).
    pub(super) fn global(
        &mut self,
        at: (u32, u32),
        write: bool,
        tid: u32,
        inst: u32,
    ) -> Option<(u32, u32)> {
        if self.storing && write {
            self.writes.insert(at, (tid, inst, 0));
            return None;
        }
        self.writes.get(&at).map(|&(t, i, _)| (t, i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_conflicts_with_other_threads_until_it_lands() {
        let mut f = InFlight::default();
        assert_eq!(f.issue(3, 8, 5, 40), None);
        assert!(f.any());
        assert_eq!(f.touch((3, 4), 6, 41, false), Some((5, 40)));
        assert_eq!(f.touch((0, 3), 6, 41, false), None, "another word");
        assert_eq!(f.touch((3, 4), 5, 41, true), None, "its own thread");
        assert!(f.any(), "a store of its thread at another instruction");
        assert_eq!(f.touch((3, 4), 5, 40, true), None);
        assert!(!f.any(), "landed");
        assert_eq!(f.touch((3, 4), 6, 41, true), None);
    }

    #[test]
    fn a_second_copy_of_one_thread_into_words_its_first_has_not_landed_in_is_found() {
        let mut f = InFlight::default();
        assert_eq!(f.issue(3, 8, 5, 40), None);
        assert_eq!(
            f.issue(3, 8, 5, 52),
            Some((5, 40)),
            "the first is in flight"
        );
        assert_eq!(f.touch((3, 4), 5, 52, true), None, "the second lands");
        assert_eq!(f.issue(3, 8, 5, 40), None, "after it landed, a copy again");
    }

    #[test]
    fn a_bulk_copy_is_in_flight_until_a_wait_on_its_phase_orders_the_access() {
        let mut f = InFlight::default();
        f.bulk_issue((64, 128), 0, 7, (8, 3));
        assert!(f.any() && f.bulk_any());
        let own = |s: &Seen| s.warp == 1 && s.lanes >> 2 & 1 == 1;
        assert_eq!(f.bulk_touch((96, 100), own), Some((0, 7)), "nobody waited");
        assert_eq!(f.bulk_touch((0, 64), |_| false), None, "another word");
        let seen = |lanes| Seen {
            warp: 1,
            lanes,
            seq: 0,
            clk: 0,
        };
        f.bulk_seen(8, 2, seen(4));
        f.bulk_seen(16, 3, seen(4));
        assert_eq!(
            f.bulk_touch((96, 100), own),
            Some((0, 7)),
            "an earlier phase, another mbarrier"
        );
        f.bulk_barrier();
        assert!(f.bulk_any(), "a barrier no wait preceded");
        f.bulk_seen(8, 3, seen(4));
        assert_eq!(f.bulk_touch((96, 100), own), None, "lane 34 waited");
        assert_eq!(
            f.bulk_touch((96, 100), |_| false),
            Some((0, 7)),
            "a thread ordered after no wait"
        );
        f.bulk_barrier();
        assert!(!f.any(), "a barrier after the wait");
        f.bulk_issue((64, 128), 0, 7, (8, 4));
        f.bulk_issue((96, 160), 0, 9, (8, 5));
        assert_eq!(
            f.bulk_touch((64, 68), |_| false),
            None,
            "written over by the next copy"
        );
        assert_eq!(f.bulk_touch((150, 151), |_| false), Some((0, 9)));
    }
}
