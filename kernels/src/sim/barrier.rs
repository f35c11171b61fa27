//! The sentence of a `barrier_divergence`: which threads of the block wait at which
//! `__syncthreads()` (by line), and which exited without reaching it and where they turned away
//! (the line of the `return` or branch, not the closing brace every exit shares), as compact lists
//! (`threads 0-15, 17`, coordinates for 2D and 3D blocks). A second `impl` block of the machine.

use super::exec::{Machine, Warp};

impl Machine<'_> {
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
        // Where each exited thread left: a predicated `ret` is its own line; otherwise the last
        // forward branch it took (the `return` or `if` that jumped past the barrier), not the
        // closing brace every exit shares.
        let left = |w: &Warp, l: usize| {
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
        };
        let mut gone: Vec<(u32, u32)> = warps
            .iter()
            .flat_map(|w| {
                ids(w.exited, w).map(move |t| (line(left(w, (t - w.first_tid) as usize)), t))
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
