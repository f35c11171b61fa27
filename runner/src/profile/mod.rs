//! `runner profile`'s runner side: what the `profile` crate's model is given for one case of a
//! kernel, and what it predicts. [`profiled`] compiles the kernel (NVRTC's PTX, and its CUBIN for
//! the registers a thread takes, `registers`), chooses the blocks to simulate (`sample`: a spread
//! of a full-scale case's blocks, a persistent grid probed), runs the simulator with the
//! model's observer (`profile::Profiler`), turns the counts into the model's load (`load`) and
//! predicts the time on an H100. `text` makes what `runner profile` prints of it; `grade`'s
//! class report takes the predicted time alone.

mod load;
mod registers;
mod sample;
pub mod text;

use crate::check;
use ::profile::{Critical, H100, Occupancy, Prediction, Profiler};
use load::Traffic;
use sim::SimOptions;
use spec::Scale;
use std::borrow::Cow;

/// What `profile` counted and predicted for one case of a kernel.
pub struct Profiled<'a> {
    /// The case as launched (a declared launch resolved; the case given, not a copy, where the
    /// puzzle declares none: a full case's inputs are megabytes).
    pub case: Cow<'a, spec::Case>,
    pub prof: Profiler,
    /// The simulator's diagnostics (where the counts stop).
    pub diagnostics: Vec<spec::Diagnostic>,
    /// A persistent grid: the counts stand for the first `first[0]` blocks of each row.
    pub persistent: bool,
    pub first: [u32; 3],
    /// The blocks the counts stand for, and how many of them ran.
    pub blocks: u64,
    pub runs: u64,
    pub outputs: usize,
    /// Bytes from and to DRAM at the least.
    pub dram: f64,
    pub occupancy: Option<(u32, Occupancy)>,
    pub per_sm: u64,
    pub path: Option<(f64, f64)>,
    pub prediction: Prediction,
}

/// Profiles `case` of `code` (shown as `file`), a full-scale one by a sample of `sample`
/// blocks, and predicts its time on an H100.
pub fn profiled<'a>(
    puzzle: &spec::Puzzle,
    code: &str,
    file: &str,
    case: &'a spec::Case,
    sample: u64,
) -> Result<Profiled<'a>, spec::Diagnostic> {
    let sampled = case.scale == Scale::Full;
    let case = match puzzle.declared_launch {
        Some(_) => Cow::Owned(check::with_declared_launch(puzzle, code, file, case)?),
        None => Cow::Borrowed(case),
    };
    let ptx = check::ptx(code, file, &case.macros)?;
    let job = &case.job;
    let gpu = H100;
    let plan = sample::plan(
        job.launch.grid,
        gpu.sms,
        sampled,
        ptx.contains("%nsmid"),
        sample,
    );
    let mut prof = Profiler::new(plan.sample.clone());
    prof.critical = Some(Critical::new(gpu.latencies()));
    prof.probe = plan.wide.then_some(plan.probe);
    let opts = SimOptions {
        checks: false,
        sms: gpu.sms,
        ..SimOptions::default()
    };
    let out = sim::run_observed(&ptx, job, &opts, &mut prof);
    // The blocks the counts stand for, and how many of them ran.
    let (persistent, within) = sample::persistent(&plan, &prof.block_accesses, gpu.sms);
    let first = plan.first;
    let (blocks, runs) = if persistent {
        let blocks = u64::from(first[0]) * u64::from(first[1]) * u64::from(first[2]);
        (blocks, within)
    } else {
        (job.launch.blocks(), prof.blocks_run())
    };
    let outputs: usize = job.output_names().count().max(1) * case.expected.len().max(1);
    let traffic = Traffic::of(job);
    let threads = job.launch.threads_per_block();
    let occupancy = registers::registers(code, file, &case.macros, &ptx).map(|r| {
        let o = ::profile::occupancy(&gpu.sm, threads, r, prof.shared_bytes as u32);
        (r, o)
    });
    let per_sm = blocks.div_ceil(u64::from(gpu.sms)).max(1);
    // A persistent grid's path is that of the blocks that work.
    let dram_read = (traffic.dram - traffic.stores) / blocks.max(1) as f64;
    let path = (prof.critical.as_ref()).and_then(|k| {
        ::profile::block_path(&k.blocks, |b| !persistent || b[0] < gpu.sms, dram_read)
    });
    let occupied = occupancy.as_ref().map(|(_, o)| o);
    let load = load::load(&prof, blocks, runs, &traffic, occupied, per_sm, path);
    Ok(Profiled {
        prediction: ::profile::predict(&gpu, &load),
        diagnostics: out.diagnostics,
        case,
        prof,
        persistent,
        first,
        blocks,
        runs,
        outputs,
        dram: traffic.dram,
        occupancy,
        per_sm,
        path,
    })
}
