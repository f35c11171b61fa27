//! The sentence of a `barrier_divergence`: which threads of the block wait at which
//! `__syncthreads()` (by line), and which exited without reaching it and where they turned away
//! (the line of the `return` or branch, not the closing brace every exit shares), as compact lists
//! (`threads 0-15, 17`, coordinates for 2D and 3D blocks); and the sentence of a deadlock at a
//! named barrier or an `mbarrier` wait: who waits where, how many arrived of how many expected,
//! and where everyone else is. A second `impl` block of the machine.

use crate::fault::{Fault, Located};
use crate::machine::{Machine, Warp};
use crate::site::Locate;

impl Machine<'_> {
    /// Where lane `l` of `w`, which exited, left: a predicated `ret` is its own line; otherwise
    /// the last forward branch it took (the `return` or `if` that jumped past the barrier), not
    /// the closing brace every exit shares.
    pub(super) fn left(&self, w: &Warp, l: usize) -> u32 {
        let exit = w.exit_pc[l];
        let guarded = self
            .prog
            .insts
            .get(exit as usize)
            .is_some_and(|i| i.guard.is_some());
        if guarded || w.left_pc[l] == u32::MAX {
            exit
        } else {
            w.left_pc[l]
        }
    }

    /// Adds to a warp collective's divergence `fault` at `pc` where the lanes missing from
    /// `exec` went ([`Self::missing_lanes`]).
    pub(super) fn name_missing_lanes(&self, fault: &mut Fault, w: &Warp, exec: u32, pc: u32) {
        if let Fault::BarrierDivergence { detail } = fault {
            let missing = self.missing_lanes(w, exec, pc);
            if !missing.is_empty() {
                *detail = format!("{detail}; {missing}");
            }
        }
    }

    /// For a warp collective (`mma.sync`, `wmma`, `wgmma`) at `pc` that lanes `exec` of `w` reached
    /// without the others: where the missing lanes are. Those that exited, or jumped past it on
    /// their way out, by the line they left at (the `return` or the branch before the
    /// collective, as a barrier's sentence says); the others by the line they are at.
    pub(super) fn missing_lanes(&self, w: &Warp, exec: u32, pc: u32) -> String {
        let line = |pc: u32| self.prog.insts.get(pc as usize).map_or(0, |i| i.line);
        let mut at: Vec<(u32, bool, u32)> = (0..32u32)
            .filter(|&l| exec >> l & 1 == 0 && w.lanes >> l & 1 == 1)
            .map(|l| {
                if w.exited >> l & 1 == 1 {
                    return (line(self.left(w, l as usize)), true, l);
                }
                let there = w
                    .others
                    .iter()
                    .find(|g| g.1 >> l & 1 == 1)
                    .map_or(w.pc, |g| g.0);
                let branch = w.left_pc[l as usize];
                if there > pc && branch != u32::MAX && branch < pc {
                    (line(branch), true, l)
                } else {
                    (line(there), false, l)
                }
            })
            .collect();
        at.sort_unstable();
        let mut parts = vec![];
        let mut i = 0;
        while i < at.len() {
            let (ln, gone) = (at[i].0, at[i].1);
            let lanes: Vec<u32> = at[i..]
                .iter()
                .take_while(|x| (x.0, x.1) == (ln, gone))
                .map(|x| x.2)
                .collect();
            i += lanes.len();
            let list = compact(&lanes);
            parts.push(if gone {
                format!("lanes {list} left at line {ln} and did not reach it")
            } else {
                format!("lanes {list} are at line {ln}")
            });
        }
        parts.join("; ")
    }

    /// The sentence of a barrier some threads of the block wait at and others do not.
    pub(super) fn divergence(&self, warps: &[Warp], parked: &[(usize, u32, u32)]) -> String {
        let line = |pc: u32| self.prog.insts.get(pc as usize).map_or(0, |i| i.line);
        fn ids(mask: u32, w: &Warp) -> impl Iterator<Item = u32> + '_ {
            (0..32)
                .filter(move |l| mask >> l & 1 == 1)
                .map(move |l| w.first_tid + l)
        }
        let mut pcs: Vec<u32> = parked.iter().map(|g| g.1).collect();
        pcs.sort_unstable();
        pcs.dedup();
        let mut parts = vec![];
        for &pc in &pcs {
            let mut t: Vec<u32> = parked
                .iter()
                .filter(|g| g.1 == pc)
                .flat_map(|&(wi, _, m)| ids(m, &warps[wi]))
                .collect();
            t.sort_unstable();
            parts.push(format!(
                "{} {} at the __syncthreads() on line {}",
                self.thread_list(&t),
                if t.len() == 1 { "waits" } else { "wait" },
                line(pc)
            ));
        }
        let mut gone: Vec<(u32, u32)> = warps
            .iter()
            .flat_map(|w| {
                ids(w.exited, w).map(move |t| (line(self.left(w, (t - w.first_tid) as usize)), t))
            })
            .collect();
        gone.sort_unstable();
        let mut lines: Vec<u32> = gone.iter().map(|g| g.0).collect();
        lines.dedup();
        for &at in &lines {
            let mut t: Vec<u32> = gone.iter().filter(|g| g.0 == at).map(|g| g.1).collect();
            t.sort_unstable();
            parts.push(format!(
                "{} left at line {at} and exited without reaching {}",
                self.thread_list(&t),
                if pcs.len() > 1 { "them" } else { "it" }
            ));
        }
        let [x, y, z] = self.block_id;
        format!(
            "in block ({x},{y},{z}), {}; every thread of a block must reach the same __syncthreads(): is one inside an `if` that only some threads take, or does a `return` come before it?",
            parts.join(", but ")
        )
    }

    /// The block can go no further: groups wait at named barriers, on `mbarrier` phases or at a
    /// `__syncthreads()` (`parked`), and no thread is left to arrive.
    pub(super) fn deadlock(&self, warps: &[Warp], parked: &[(usize, u32, u32)]) -> Located {
        let line = |pc: u32| self.prog.site(pc);
        let text = |pc: u32| {
            self.prog
                .insts
                .get(pc as usize)
                .map_or("", |i| self.prog.texts[i.text as usize].as_str())
        };
        let ids = |groups: &mut dyn Iterator<Item = (usize, u32)>| {
            let mut t: Vec<u32> = groups
                .flat_map(|(wi, m)| {
                    (0..32)
                        .filter(move |l| m >> l & 1 == 1)
                        .map(move |l| warps[wi].first_tid + l)
                })
                .collect();
            t.sort_unstable();
            t
        };
        let verb = |t: &[u32]| if t.len() == 1 { "waits" } else { "wait" };
        let mut parts = vec![];
        let mut first: Option<(usize, u32)> = None;
        for (id, b) in self.sync.bars.iter().enumerate() {
            let Some(&(w0, pc, _)) = b.waiters.first() else {
                continue;
            };
            let pc = pc - 1;
            first.get_or_insert((w0, pc));
            let t = ids(&mut b.waiters.iter().map(|g| (g.0, g.2)));
            parts.push(format!(
                "{} {} at barrier {id} (`{}` on line {}), where {}",
                self.thread_list(&t),
                verb(&t),
                text(pc),
                line(pc),
                b.tally()
            ));
        }
        let mut spins: Vec<_> = self.sync.spinners.iter().collect();
        spins.sort_by_key(|s| (s.pc, s.warp));
        let mut i = 0;
        while i < spins.len() {
            let s = spins[i];
            let n = spins[i..]
                .iter()
                .take_while(|o| o.pc == s.pc && o.at == s.at)
                .count();
            first.get_or_insert((s.warp, s.pc));
            let t = ids(&mut spins[i..i + n].iter().map(|g| (g.warp, g.lanes)));
            parts.push(format!(
                "{} {} on the mbarrier at shared byte {} (`{}` on line {}) for {}",
                self.thread_list(&t),
                verb(&t),
                s.at,
                text(s.pc),
                line(s.pc),
                self.sync.mbars.tally(s)
            ));
            i += n;
        }
        let mut pcs: Vec<u32> = parked.iter().map(|g| g.1).collect();
        pcs.sort_unstable();
        pcs.dedup();
        for &pc in &pcs {
            let t = ids(&mut parked.iter().filter(|g| g.1 == pc).map(|g| (g.0, g.2)));
            first.get_or_insert((parked[0].0, pc));
            parts.push(format!(
                "{} {} at the __syncthreads() on line {}",
                self.thread_list(&t),
                verb(&t),
                line(pc)
            ));
        }
        let gone = ids(&mut warps.iter().enumerate().map(|(i, w)| (i, w.exited)));
        if !gone.is_empty() {
            parts.push(format!("{} exited", self.thread_list(&gone)));
        }
        let [x, y, z] = self.block_id;
        let detail = format!(
            "deadlock in block ({x},{y},{z}): {}; no thread is left that could arrive. A named barrier completes when as many threads as its count (whole warps, counted 32 each) have reached `bar.sync`/`bar.arrive` with its id; an mbarrier phase when its expected arrivals have come: is an arrive missing, a count wrong, or a wait on the wrong phase parity?",
            parts.join("; ")
        );
        let (wi, pc) = first.unwrap_or((0, 0));
        self.fault(
            Fault::BarrierDivergence { detail },
            Some(pc as usize),
            warps.get(wi),
            None,
        )
    }

    /// "threads 0-15, 17 (threadIdx.x)" for a 1D block, coordinates otherwise; long lists cut.
    pub(super) fn thread_list(&self, ids: &[u32]) -> String {
        let mut runs: Vec<(u32, u32)> = vec![];
        for &t in ids {
            match runs.last_mut() {
                Some(r) if r.1 + 1 == t => r.1 = t,
                _ => runs.push((t, t)),
            }
        }
        let one_d = self.block[1] * self.block[2] == 1;
        let name = |t: u32| {
            if one_d {
                t.to_string()
            } else {
                let c = self.thread_of(t);
                format!("({},{},{})", c[0], c[1], c[2])
            }
        };
        let mut shown: Vec<String> = runs
            .iter()
            .take(4)
            .map(|&(a, b)| {
                if a == b {
                    name(a)
                } else {
                    format!("{}-{}", name(a), name(b))
                }
            })
            .collect();
        if runs.len() > 4 {
            shown.push(format!("and {} more", runs.len() - 4));
        }
        let noun = if ids.len() == 1 { "thread" } else { "threads" };
        format!("{noun} {}", shown.join(", "))
    }
}

/// Lane numbers as runs: `0-3, 5, 7-9`.
fn compact(xs: &[u32]) -> String {
    let mut parts: Vec<String> = vec![];
    let mut i = 0;
    while i < xs.len() {
        let mut j = i;
        while j + 1 < xs.len() && xs[j + 1] == xs[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            xs[i].to_string()
        } else {
            format!("{}-{}", xs[i], xs[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}
