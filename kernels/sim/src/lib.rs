//! The PTX simulator: runs a decoded program on the CPU with every access checked.
//!
//! Entry point: [`run`] (or [`run_with`] for options). `ptx` (the crate below) turns the text
//! into an `ir::Program`, once; here `exec` and `step` run the launch over the spaces of
//! `memory`. The modules are layered with no circle (ARCHITECTURE.md draws them): plain data
//! and arithmetic at the bottom, the checks and the observer trait, the machine's state
//! (`machine`, `sync`, `lanes`), one module per instruction family, and the executor on top;
//! a family never imports the executor. This crate may import `ptx` and `spec` only.
//!
//! It never panics on a learner's kernel: what it cannot
//! parse or execute becomes an `unsupported_instruction` diagnostic, and a fault (out of
//! bounds, of a buffer or of the `__shared__` array an address derives from, see `provenance`;
//! timeout, barrier divergence) stops the launch with a diagnostic at the learner's
//! source line (from `.loc`), block and thread. A kernel's `printf` runs (`printf`), its text kept with
//! the thread that printed it. The checks of `check` (races, uninitialized
//! shared reads, the access budget, unwritten outputs, writes into a pitched output's padding) let the launch finish and add their
//! diagnostics, a few of each kind. Output buffers are poisoned with NaN before the launch (a
//! pitched output's padding holds a sentinel).
//! Runs are deterministic.

mod atom;
mod barrier;
mod budget;
mod bulk;
mod call;
mod check;
mod check_global;
mod collective;
mod contain;
mod convert;
mod copy;
mod exact;
mod exchange;
mod exec;
mod explain;
mod fault;
mod finding;
mod float;
#[cfg(test)]
mod gpu_facts;
mod half;
mod host_maps;
mod inflight;
mod lanes;
mod machine;
mod mbarrier;
mod memory;
mod mma_half;
mod mma_num;
mod mma_step;
mod named;
pub mod observe;
mod ops;
mod order;
mod printf;
mod sched;
mod setup;
mod site;
mod step;
mod sync;
mod tensor_map;
mod watch;
mod wgmma;
mod wmma;

use ptx::decode;
use spec::diag::{Diagnostic, Kind};
use spec::job::{Arg, Job, RunOutput};
use spec::shape::{MAX_SHARED_BYTES, MAX_THREADS};
use std::time::Instant;

/// Switches for one simulated launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Thread-instructions allowed before `timeout`; `None` for [`default_budget`].
    pub budget: Option<u64>,
    /// The teaching checks (races, uninitialized reads, access budget, unwritten outputs).
    /// Bounds, timeouts and barrier divergence are checked either way.
    pub checks: bool,
    /// What `%nsmid` reads, the SMs the kernel is told the GPU has: 1 by default (one simulated
    /// SM runs the blocks one after another, and a persistent kernel then does all its work in
    /// block 0); `runner profile` gives the H100's 132, so that such a kernel spreads its work
    /// over as many blocks as it does on that GPU.
    pub sms: u32,
    /// The learner's `__shared__` declarations (`ptx::declared::parse` of the CUDA source), so
    /// that a diagnostic names `sm[2600].x` rather than the 4-byte word `sm[5200]`; empty where
    /// the source is not known.
    pub shared: Vec<ptx::declared::SharedDecl>,
    /// The learner's pointers into those arrays (`ptx::declared::aliases`), so that a finding at
    /// a line indexing through one names it beside the array.
    pub aliases: Vec<ptx::declared::SharedAlias>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            budget: None,
            checks: true,
            sms: 1,
            shared: Vec::new(),
            aliases: Vec::new(),
        }
    }
}

/// The default instruction budget: 200 thread-instructions per multiply-add of the case's work,
/// plus ten million for setup, so a correct kernel never meets it and an endless loop stops
/// within seconds.
pub fn default_budget(work: u64) -> u64 {
    work.saturating_mul(200).saturating_add(10_000_000)
}

/// Runs `job` on the PTX module `ptx`.
pub fn run(ptx: &str, job: &Job) -> RunOutput {
    run_with(ptx, job, &SimOptions::default())
}

pub(crate) fn failed(d: Diagnostic, seconds: f64) -> RunOutput {
    RunOutput {
        diagnostics: vec![d],
        seconds,
        ..RunOutput::default()
    }
}

/// Runs `job` on `ptx` with `opts`. A panic inside the simulator (a bug of ours, never the
/// learner's) is caught and becomes an `internal_error` diagnostic naming the instruction that
/// was running, so that the rest of the check still reports.
pub fn run_with(ptx: &str, job: &Job, opts: &SimOptions) -> RunOutput {
    launch(ptx, job, opts, None)
}

/// Runs `job` on `ptx` with `opts`, `obs` seeing every access and issued instruction, then the
/// fault and the findings as marks (`observe`).
pub fn run_observed(
    ptx: &str,
    job: &Job,
    opts: &SimOptions,
    obs: &mut dyn observe::Observer,
) -> RunOutput {
    launch(ptx, job, opts, Some(obs))
}

/// Both entries' common path: the run contained (a panic is an `internal_error`).
fn launch(
    ptx: &str,
    job: &Job,
    opts: &SimOptions,
    obs: Option<&mut dyn observe::Observer>,
) -> RunOutput {
    let at = std::cell::Cell::new(None);
    contain::contained(ptx, &job.kernel, &at, || {
        run_inner(ptx, job, opts, obs, &at)
    })
}

/// One launch from the PTX to its output: the program and its memory laid out, the launch's
/// shape checked, the machine run, the observer told the marks, then the diagnostics and the
/// outputs read back.
fn run_inner(
    ptx: &str,
    job: &Job,
    opts: &SimOptions,
    mut obs: Option<&mut dyn observe::Observer>,
    at: &std::cell::Cell<Option<usize>>,
) -> RunOutput {
    let start = Instant::now();
    let prog = match program(ptx, job, opts) {
        Ok(p) => p,
        Err(d) => return failed(d, 0.0),
    };
    let mem = match setup::memory_for(&prog, job) {
        Ok(m) => m,
        Err(d) => return failed(*d, 0.0),
    };
    let l = job.launch;
    let threads = l.threads_per_block();
    let shared_bytes = match launch_shared(&prog, job) {
        Ok(n) => n,
        Err(d) => return failed(d, 0.0),
    };
    let is_output: Vec<bool> = (0..mem.globals.len())
        .map(|i| job.args.get(i).is_some_and(|a| a.output_len().is_some()))
        .collect();
    let chk = checks_for(opts, &prog, job, &mem, &is_output);
    let buffers: Vec<String> = mem.globals.iter().map(|b| b.name.clone()).collect();
    let launched = observe::Launched {
        prog: &prog,
        grid: l.grid,
        block: l.block,
        shared_bytes: shared_bytes as usize,
        buffers: &buffers,
    };
    if let Some(o) = obs.as_deref_mut() {
        o.start(&launched);
    }
    let mut m = machine::Machine {
        prog: &prog,
        mem,
        grid: l.grid,
        block: l.block,
        shared_bytes: shared_bytes as usize,
        budget: opts.budget.unwrap_or_else(|| default_budget(job.work)),
        sms: opts.sms.max(1),
        executed: 0,
        block_id: [0; 3],
        chk,
        out: RunOutput::default(),
        obs: match &mut obs {
            Some(o) => Some(&mut **o),
            None => None,
        },
        at,
        sync: Default::default(),
    };
    let result = m.run();
    let outputs: Vec<usize> = (0..is_output.len()).filter(|&i| is_output[i]).collect();
    if result.is_ok() {
        m.chk.finish(&outputs, u64::from(threads) * l.blocks());
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut out = RunOutput {
        seconds,
        instructions: Some(m.executed),
        stats: opts.checks.then_some(m.chk.stats),
        ..std::mem::take(&mut m.out)
    };
    if let Some(o) = m.obs.take() {
        tell_marks(o, &result, &m.chk.kept, &launched);
    }
    let names_of = Naming {
        job,
        prog: &prog,
        buffers: &buffers,
    };
    report(&mut out, result, &m, &names_of);
    out
}

/// The decoded program of `job`'s kernel with the learner's declarations of `opts`, checked
/// against what a GPU would launch; a diagnostic where there is none.
fn program(ptx: &str, job: &Job, opts: &SimOptions) -> Result<ptx::ir::Program, Diagnostic> {
    let mut prog = match decode(ptx, &job.kernel) {
        Ok(p) => p,
        Err(ptx::DecodeError::NotFound { kernel, found }) => {
            let msg = format!(
                "the PTX has no kernel named `{kernel}` (found: {}); is it declared `extern \"C\" __global__`?",
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found.join(", ")
                }
            );
            return Err(Diagnostic::new(Kind::KernelNotFound, msg));
        }
        Err(ptx::DecodeError::Bad { line, message }) => {
            let msg = format!("the simulator cannot read this PTX (PTX line {line}): {message}");
            return Err(Diagnostic::new(Kind::UnsupportedInstruction, msg));
        }
    };
    prog.declared = opts.shared.clone();
    prog.aliases = opts.aliases.clone();
    if let Err(e) = setup::limits(&prog) {
        return Err(Diagnostic::new(Kind::LaunchError, e.to_string()));
    }
    Ok(prog)
}

/// The shared memory of one block of `job`'s launch (static arrays plus dynamic), once the
/// launch's shape is one a GPU runs.
fn launch_shared(prog: &ptx::ir::Program, job: &Job) -> Result<u64, Diagnostic> {
    let l = job.launch;
    let threads = l.threads_per_block();
    if threads == 0 || threads > MAX_THREADS || l.blocks() == 0 {
        let msg = format!(
            "invalid launch: grid {:?}, block {:?} ({threads} threads per block; 1 to {MAX_THREADS} allowed)",
            l.grid, l.block
        );
        return Err(Diagnostic::new(Kind::LaunchError, msg));
    }
    let shared_bytes = if prog.dyn_shared_name.is_some() {
        prog.dyn_shared_offset + u64::from(l.shared_bytes)
    } else {
        prog.static_shared + u64::from(l.shared_bytes)
    };
    if shared_bytes > u64::from(MAX_SHARED_BYTES) {
        let msg = format!(
            "the kernel needs {shared_bytes} bytes of shared memory per block (static arrays plus {} dynamic), more than the {MAX_SHARED_BYTES} a block can have",
            l.shared_bytes
        );
        return Err(Diagnostic::new(Kind::LaunchError, msg));
    }
    Ok(shared_bytes)
}

/// The checks of `job`'s launch over the buffers of `mem` (`is_output[i]`: buffer `i` is an
/// output), its pitched outputs marked.
fn checks_for(
    opts: &SimOptions,
    prog: &ptx::ir::Program,
    job: &Job,
    mem: &memory::Memory,
    is_output: &[bool],
) -> check::Checks {
    let lens: Vec<usize> = mem.globals.iter().map(|b| b.bytes.len()).collect();
    let threads = job.launch.threads_per_block();
    let mut chk = check::Checks::new(opts.checks, prog, job.budget, threads, &lens, is_output);
    for (i, a) in job.args.iter().enumerate() {
        if let Some(p) = a.pitch() {
            chk.set_pitch(i, p);
        }
    }
    chk
}

/// Tells the attached observer the fault that stopped the launch, if any, then the findings,
/// each as a mark at its element.
fn tell_marks(
    o: &mut dyn observe::Observer,
    result: &Result<(), fault::Located>,
    kept: &[finding::Kept],
    launched: &observe::Launched<'_>,
) {
    let fault = result
        .as_ref()
        .err()
        .and_then(|f| watch::fault_mark(f, launched));
    let found = kept.iter().filter_map(|k| watch::finding_mark(k, launched));
    fault
        .into_iter()
        .chain(found)
        .for_each(|mark| o.mark(&mark));
}

/// What the diagnostics need from the launch to name its buffers.
struct Naming<'a> {
    job: &'a Job,
    prog: &'a ptx::ir::Program,
    buffers: &'a [String],
}

/// Into `out`: the fault's diagnostic, if the launch stopped, then the checks' findings as
/// diagnostics; after a launch that finished, the output buffers as floats.
fn report(
    out: &mut RunOutput,
    result: Result<(), fault::Located>,
    m: &machine::Machine<'_>,
    naming: &Naming<'_>,
) {
    let Naming { job, prog, buffers } = *naming;
    let l = job.launch;
    let pitches: Vec<_> = (0..buffers.len())
        .map(|i| job.args.get(i).and_then(Arg::pitch))
        .collect();
    // Inputs the runner also copied into a `__constant__` array, for the budget's advice.
    let copies: Vec<(String, String)> = job
        .constants
        .iter()
        .filter_map(|c| {
            job.args.iter().find_map(|a| match a {
                Arg::Input { name, data } if *data == c.data => {
                    Some((name.clone(), c.symbol.clone()))
                }
                _ => None,
            })
        })
        .collect();
    let names = explain::Names {
        pitches: &pitches,
        prog,
        buffers,
        copies: &copies,
        grid: l.grid,
        block: l.block,
    };
    let found = m
        .chk
        .kept
        .iter()
        .map(|k| explain::finding_diagnostic(k, &names));
    match result {
        Err(f) => {
            out.diagnostics.push(f.diagnostic(prog));
            out.diagnostics.extend(found);
        }
        Ok(()) => {
            out.diagnostics.extend(found);
            for (i, a) in job.args.iter().enumerate() {
                if a.output_len().is_some() {
                    let b = &m.mem.globals[i].bytes;
                    out.outputs.push(
                        b.chunks_exact(4)
                            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    );
                }
            }
        }
    }
}
