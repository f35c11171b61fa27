//! The whole inlined-at chain of a `.loc`. NVRTC writes with each line of an inlined function
//! only the immediate call (`inlined_at file line col`); where that call is itself inside an
//! inlined function (a header's function calling another, as `__pipeline_memcpy_async` of
//! `cuda_pipeline_primitives.h` calls into `cuda_pipeline_helpers.h`), the call's own position
//! was written by the `.loc` just before, with its own `inlined_at`. So each position's latest
//! call is remembered, and a line's chain is followed outward from its call until it reaches a
//! position that was not inlined. A line in a header is then placed at the first call of the chain
//! in the kernel's own file (the file of the latest `.loc` that was not inlined), with the header
//! calls between as its `via`; a line in the kernel's file keeps its immediate call.

use std::collections::HashMap;

/// A source position: `.file` index, line, column.
pub type Pos = (u32, u32, u32);

/// Where a `.loc`'s line is called from, for the learner: the call's `.file` index and line
/// (0: not inlined), and the header calls between it and the line, outermost first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Called {
    pub file: u32,
    pub line: u32,
    pub via: Vec<(u32, u32)>,
}

/// The calls seen so far in one body.
#[derive(Default)]
pub struct Chains {
    /// Each position's latest call.
    calls: HashMap<Pos, Pos>,
    /// The file of the latest `.loc` that was not inlined: the kernel's own.
    home: Option<u32>,
}

/// Calls followed at most, outward from a line (a cycle or a runaway chain stops there).
const DEPTH: usize = 64;

impl Chains {
    /// A `.loc` at `pos`, inlined at `call` (if it was): where it is called from.
    pub fn loc(&mut self, pos: Pos, call: Option<Pos>) -> Called {
        let Some(call) = call else {
            self.home = Some(pos.0);
            return Called::default();
        };
        self.calls.insert(pos, call);
        let mut chain = vec![call];
        while chain.len() < DEPTH {
            match self.calls.get(chain.last().unwrap()) {
                Some(next) if !chain.contains(next) && *next != pos => chain.push(*next),
                _ => break,
            }
        }
        let home = self.home.unwrap_or(chain.last().unwrap().0);
        let immediate = Called {
            file: call.0,
            line: call.1,
            via: vec![],
        };
        if pos.0 == home {
            return immediate;
        }
        match chain.iter().position(|p| p.0 == home) {
            Some(k) => Called {
                file: home,
                line: chain[k].1,
                via: chain[..k].iter().rev().map(|p| (p.0, p.1)).collect(),
            },
            None => immediate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_line_reached_through_header_calls_is_placed_at_the_learners_call() {
        let mut c = Chains::default();
        assert_eq!(c.loc((1, 10, 3), None), Called::default());
        // kernel.cu:15 calls primitives.h:103, which calls helpers.h:292 -> 261 -> 166.
        let direct = c.loc((2, 103, 9), Some((1, 15, 9)));
        assert_eq!((direct.file, direct.line, direct.via.len()), (1, 15, 0));
        c.loc((3, 292, 5), Some((2, 103, 9)));
        c.loc((3, 261, 9), Some((3, 292, 5)));
        let deep = c.loc((3, 166, 13), Some((3, 261, 9)));
        assert_eq!(
            deep,
            Called {
                file: 1,
                line: 15,
                via: vec![(2, 103), (3, 292), (3, 261)],
            }
        );
        // The same header position called again from line 19: the latest call counts.
        c.loc((2, 103, 9), Some((1, 19, 13)));
        assert_eq!(c.loc((3, 292, 5), Some((2, 103, 9))).line, 19);
        // A learner's helper keeps its immediate call.
        c.loc((1, 34, 9), Some((1, 60, 5)));
        let helper = c.loc((1, 16, 5), Some((1, 34, 9)));
        assert_eq!((helper.file, helper.line, helper.via.len()), (1, 34, 0));
    }

    #[test]
    fn a_cycle_of_calls_ends() {
        let mut c = Chains::default();
        c.loc((1, 1, 1), None);
        c.loc((2, 5, 1), Some((2, 6, 1)));
        let d = c.loc((2, 6, 1), Some((2, 5, 1)));
        assert_eq!(
            (d.file, d.line),
            (2, 5),
            "no call in the kernel's file: the immediate one"
        );
    }
}
