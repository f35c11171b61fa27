//! The observer (`sim::observe`): what an attached observer sees is the launch itself. Every
//! thread-instruction the simulator counts arrives as an issued instruction's lanes; every global
//! read of the naive convolution arrives once, at its element; barriers split the block into
//! phases; a sampled grid runs only the blocks asked for; and the checks' findings and the fault
//! that stops a launch arrive as marks at their element, with the threads and lines involved.

use crate::common;

use common::broken::{self, P02, P03};
use ptx::ir::Space;
use sim::SimOptions;
use sim::observe::{Acc, Issue, Launched, Mark, MarkKind, Observer, Touch};
use spec::job::Launch;

#[derive(Default)]
struct Tally {
    issued: u64,
    lanes: u64,
    reads: Vec<u64>,
    writes: u64,
    blocks: Vec<[u32; 3]>,
    barriers: u32,
    marks: Vec<Mark>,
    only: Option<[u32; 3]>,
    buffers: Vec<String>,
    lines: Vec<u32>,
}

impl Observer for Tally {
    fn start(&mut self, l: &Launched<'_>) {
        self.buffers = l.buffers.to_vec();
        self.lines = l.prog.insts.iter().map(|i| i.line).collect();
        self.reads = vec![0; l.buffers.len()];
    }
    fn runs_block(&mut self, block: [u32; 3]) -> bool {
        self.only.is_none_or(|b| b == block)
    }
    fn begin_block(&mut self, block: [u32; 3], _linear: u32, _shared: usize) {
        self.blocks.push(block);
    }
    fn issue(&mut self, i: Issue) {
        self.issued += 1;
        self.lanes += u64::from(i.exec.count_ones());
    }
    fn access(&mut self, t: &Touch) {
        match (t.space, t.acc) {
            (Space::Global, Acc::Read) => self.reads[t.buf] += 1,
            (Space::Global, Acc::Write) => self.writes += 1,
            _ => {}
        }
    }
    fn barrier(&mut self) {
        self.barriers += 1;
    }
    fn mark(&mut self, m: &Mark) {
        self.marks.push(m.clone());
    }
}

fn naive(size: usize, conv: usize) -> spec::Job {
    let (a, b) = common::signal(3, size, conv);
    common::conv_job(
        "conv1d",
        a,
        b,
        size,
        Launch::linear(size.div_ceil(64) as u32, 64),
    )
}

#[test]
fn every_thread_instruction_and_every_global_read_reaches_the_observer() {
    let ptx = common::ptx("conv_naive", "sm75");
    let (size, conv) = (300, 17);
    let job = naive(size, conv);
    for checks in [true, false] {
        let mut t = Tally::default();
        let opts = SimOptions {
            checks,
            ..Default::default()
        };
        let out = sim::run_observed(&ptx, &job, &opts, &mut t);
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        assert_eq!(Some(t.lanes), out.instructions);
        assert!(t.issued * 32 >= t.lanes && t.issued > 0);
        // One read of `a` and one of `b` per multiply-add, one write per output.
        let macs: u64 = (0..size).map(|i| conv.min(size - i) as u64).sum();
        assert_eq!(t.buffers[..3], ["a", "b", "out"]);
        assert_eq!(
            (t.reads[0], t.reads[1], t.writes),
            (macs, macs, size as u64)
        );
        assert_eq!(t.blocks.len(), size.div_ceil(64));
        // The same outputs as without an observer.
        assert_eq!(out.outputs, sim::run_with(&ptx, &job, &opts).outputs);
    }
}

#[test]
fn an_observer_can_sample_one_block_of_a_grid() {
    let ptx = common::ptx("conv_naive", "sm75");
    let mut t = Tally {
        only: Some([2, 0, 0]),
        ..Tally::default()
    };
    let opts = SimOptions {
        checks: false,
        ..Default::default()
    };
    sim::run_observed(&ptx, &naive(300, 17), &opts, &mut t);
    assert_eq!(t.blocks, vec![[2, 0, 0]]);
    assert_eq!(t.writes, 64);
}

fn marks(name: &str, shape: &broken::Shape) -> Tally {
    let ptx = common::ptx(&format!("broken/{name}"), "sm90");
    let mut t = Tally::default();
    sim::run_observed(&ptx, &broken::job(shape), &SimOptions::default(), &mut t);
    t
}

#[test]
fn a_missing_barrier_is_a_race_mark_at_the_shared_element_with_both_threads() {
    let t = marks("p03_missing_barrier", &P03);
    let m = t
        .marks
        .iter()
        .find(|m| m.kind == MarkKind::Race)
        .expect("a race mark");
    // The element the diagnostic names.
    let d = broken::check("p03_missing_barrier", &P03);
    assert_eq!(m.space, Space::Shared);
    assert!(
        d[0].message.contains(&format!("`{}[{}]`", m.name, m.index)),
        "{m:?} {}",
        d[0].message
    );
    assert_eq!(m.sides.len(), 2);
    assert!(m.sides[0].write && !m.sides[1].write, "{m:?}");
    assert_ne!(m.sides[0].thread, m.sides[1].thread);
    // The reader's line is the one the diagnostic names.
    let (_, line) = broken::expected("p03_missing_barrier");
    assert_eq!(t.lines[m.sides[1].inst as usize], line);
}

#[test]
fn an_index_past_a_shared_array_is_an_out_of_bounds_mark_past_its_end() {
    let t = marks("p03_tile_past_end", &P03);
    let m = &t.marks[0];
    assert_eq!(m.kind, MarkKind::OutOfBounds);
    assert_eq!((m.name.as_str(), m.index), ("tile", 40));
    assert_eq!((m.block, m.sides[0].thread, m.sides[0].write), (0, 8, true));
}

#[test]
fn a_halo_never_loaded_is_an_uninit_mark_and_barriers_split_phases() {
    let t = marks("p03_halo_never_loaded", &P03);
    assert!(t.barriers > 0);
    let m = t
        .marks
        .iter()
        .find(|m| m.kind == MarkKind::Uninit)
        .expect("an uninit mark");
    assert_eq!(m.space, Space::Shared);
    assert!(m.index >= i64::from(P03.tpb), "{m:?}");
}

#[test]
fn a_correct_kernel_gets_no_mark() {
    let t = marks("p02_pointers_ok", &P02);
    assert!(t.marks.is_empty(), "{:?}", t.marks);
}
