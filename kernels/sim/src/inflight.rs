//! `cp.async` copies in flight, for the race check: the shared words a copy may write at any
//! moment between its issue and the wait of its own thread that covers it.
//!
//! The executor lands a copy's bytes when its thread waits (`copy`), which is one moment of the
//! window a GPU may pick; the check must hold every other moment too. So a copy marks its
//! destination words here when it is issued (with its thread and instruction), and its landing
//! (the same thread's write at the copy's own instruction) clears them. An access by any other
//! thread to a marked word is a race with the copy: it came after the issue in the simulated run,
//! so nothing orders it before the copy, and the copy's thread has not waited yet, so nothing
//! orders it after. That is the double buffer whose trailing `__syncthreads()` is missing: a fast
//! warp refills the stage a slow warp still reads. The reads made before the issue in the same
//! barrier epoch are `check`'s (`Checks::async_issue`). With no copy in flight, an access pays one
//! test of a counter.

/// The words of one block's shared memory under copies in flight.
#[derive(Default)]
pub(super) struct InFlight {
    /// Per shared word: 0, or the copying thread (block-linear) plus one, and the copy's
    /// instruction.
    words: Vec<(u32, u32)>,
    /// Marked words.
    live: u32,
}

impl InFlight {
    /// A new block: nothing in flight.
    pub fn reset(&mut self) {
        if self.live != 0 {
            self.words.iter_mut().for_each(|w| *w = (0, 0));
            self.live = 0;
        }
    }

    /// Whether any copy is in flight.
    #[inline(always)]
    pub fn any(&self) -> bool {
        self.live != 0
    }

    /// Copy `inst` of thread `tid` will write shared word `word` (of `words` in the block):
    /// marks it, and returns another thread's copy already in flight there (thread, instruction).
    pub fn issue(&mut self, word: usize, words: usize, tid: u32, inst: u32) -> Option<(u32, u32)> {
        if self.words.len() < words {
            self.words.resize(words, (0, 0));
        }
        let w = self.words.get_mut(word)?;
        let other = (w.0 != 0 && w.0 != tid + 1).then(|| (w.0 - 1, w.1));
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
}
