//! Benchmark of the PTX simulator on the naive one-thread-per-output convolution (puzzle-01).
//!
//! `cargo run --release -p conformance --example sim_bench [size conv]` prints multiply-adds per
//! second and thread-instructions per second, with the teaching checks on (as the runner runs)
//! and off (`SimOptions::checks`), and the cost of the checks as a ratio. The PTX is the checked-in fixture compiled by
//! NVRTC 13 (`tests/fixtures/conv_naive.sm75.ptx`), so no GPU or NVRTC is needed. Compare with
//! `python3 kernels/conformance/bench/numba_sim.py` (numba's CUDA simulator on the same kernel).

// The simulator tests' job of the puzzles' shape.
#[path = "../tests/it/common/mod.rs"]
mod common;

use spec::Rng;
use spec::job::Launch;

const PTX: &str = include_str!("../tests/fixtures/conv_naive.sm75.ptx");

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (size, conv) = (
        args.first().copied().unwrap_or(16384),
        args.get(1).copied().unwrap_or(255),
    );
    let mut rng = Rng::new(1);
    let (a, b) = (rng.signal(size), rng.signal(conv));
    let tpb = 256u32;
    let job = common::conv_job(
        "conv1d",
        a,
        b,
        size,
        Launch::linear((size as u32).div_ceil(tpb), tpb),
    );
    // Multiply-adds actually performed (the tail has fewer taps).
    let macs: u64 = (0..size).map(|i| conv.min(size - i) as u64).sum();
    println!("naive conv1d, size {size}, conv {conv}, {tpb} threads per block");
    let mut times = vec![];
    for checks in [true, false] {
        let opts = sim::SimOptions {
            checks,
            ..Default::default()
        };
        let mut best = f64::MAX;
        let mut insts = 0;
        for _ in 0..3 {
            let out = sim::run_with(PTX, &job, &opts);
            assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
            best = best.min(out.seconds);
            insts = out.instructions.unwrap_or(0);
        }
        println!(
            "checks {}: {macs} multiply-adds, {insts} thread-instructions",
            if checks { "on " } else { "off" }
        );
        println!(
            "  best of 3: {best:.3} s, {:.1} M multiply-adds/s, {:.1} M thread-instructions/s",
            macs as f64 / best / 1e6,
            insts as f64 / best / 1e6
        );
        times.push(best);
    }
    println!(
        "checks cost: {:.2}x the time without them",
        times[0] / times[1]
    );
}
