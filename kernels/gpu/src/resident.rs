//! Full-scale cases made, kept and judged inside the GPU worker.
//!
//! A full-scale case is hundreds of megabytes (puzzle 09's 8192 x 8192 input, its output and its
//! f64 reference: 1.2 GB), too much to build in every check and to move through a socket twice.
//! The worker builds a puzzle's full cases itself the first time a check asks for them (the
//! runner lends it the puzzle registry and its judge through [`Hooks`]: the worker is the runner's
//! own binary) and keeps them in its host memory for the next checks, at most
//! [`PUZZLES_KEPT`] puzzles at a time. A [`FullRun`] names a case; the worker resolves the launch
//! the kernel declares, runs it, and hands the output to the runner's judge in this process, so
//! that only the judge's summary travels back. References never reach device memory: a learner's
//! kernel, which can read any allocation of its context through a stray pointer, finds none.

use serde::{Deserialize, Serialize};
use spec::diag::Diagnostic;
use spec::job::{Arg, Job, RunOutput};
use spec::{Case, Puzzle, Scale};
use toolchain::nvrtc::{self, Compiled, Source, Target};

/// What the runner lends its worker.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// The puzzle of an id (`puzzle-09`), if it is one.
    pub puzzle: fn(&str) -> Option<Puzzle>,
    /// Judges `out`, the output of `run` on `case` (its launch resolved), and returns the summary
    /// that goes back to the runner.
    pub judge: fn(&Puzzle, &FullRun, &mut Case, RunOutput) -> serde_json::Value,
}

/// A full-scale case as the runner sees it: everything but its data and reference.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stub {
    pub name: String,
    pub macros: Vec<(String, String)>,
    /// The job with its inputs emptied.
    pub job: Job,
}

/// Run and judge the worker's full-scale case `case` of `puzzle` with the learner's source.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FullRun {
    pub code: String,
    pub file: String,
    pub puzzle: String,
    pub case: String,
    /// Whether the judge cuts a wrong case to its smallest failing size (the first wrong case of
    /// a check only).
    pub shrink: bool,
    /// Whether the diff the judge draws is colored.
    pub color: bool,
    /// The case's macros, as the runner's stand-in has them: the client compiles the kernel with
    /// them before it sends the request (see `Worker::call`); the worker uses its own case's.
    #[serde(default)]
    pub macros: Vec<(String, String)>,
}

/// Puzzles whose full cases a worker keeps at once (puzzle 09's take 1.2 GB).
pub const PUZZLES_KEPT: usize = 2;

/// The worker's full-scale cases, most recently used puzzle last.
#[derive(Default)]
pub struct Resident {
    kept: Vec<Kept>,
    /// A puzzle's full cases being built ahead of the first request (see [`Resident::build_ahead`]).
    ahead: Option<std::thread::JoinHandle<Option<Kept>>>,
}

/// A puzzle's id and its full cases.
type Kept = (String, Vec<Case>);

/// The full-scale cases of `puzzle`.
fn build(puzzle: &Puzzle) -> Vec<Case> {
    let _build = crate::trace::phase_of(|| format!("build {}'s full cases", puzzle.id));
    let mut cases = puzzle.graded_cases(Scale::Full);
    cases.retain(|c| c.scale == Scale::Full);
    cases
}

impl Resident {
    /// Starts building the full cases of puzzle `id` on other threads, so that they are ready,
    /// or nearly, when the first request asks for them (a fresh worker's: the first check after
    /// the workers start, or the spare that takes over after a fault).
    pub fn build_ahead(&mut self, hooks: Hooks, id: String) {
        self.ahead = Some(std::thread::spawn(move || {
            let puzzle = (hooks.puzzle)(&id)?;
            Some((id, build(&puzzle)))
        }));
    }

    /// The full cases of `puzzle`, built on first use.
    fn cases(&mut self, puzzle: &Puzzle) -> &mut Vec<Case> {
        if let Some(handle) = self.ahead.take() {
            let _wait = crate::trace::phase("wait for the full cases built ahead");
            if let Ok(Some(built)) = handle.join() {
                self.kept.push(built);
            }
        }
        // A grade's fresh cases are kept apart from the published ones (`Puzzle::wire_id`).
        let id = puzzle.wire_id();
        match self.kept.iter().position(|(kept, _)| *kept == id) {
            Some(i) => {
                let entry = self.kept.remove(i);
                self.kept.push(entry);
            }
            None => {
                if self.kept.len() >= PUZZLES_KEPT {
                    self.kept.remove(0);
                }
                self.kept.push((id, build(puzzle)));
            }
        }
        &mut self.kept.last_mut().expect("just kept").1
    }

    /// The stubs of `puzzle`'s full cases.
    pub fn describe(&mut self, puzzle: &Puzzle) -> Vec<Stub> {
        let cases = self.cases(puzzle);
        cases.iter().map(stub).collect()
    }

    /// Runs `run` on the GPU in this process and judges it with `hooks`.
    pub fn run<'a>(
        &'a mut self,
        hooks: &'a Hooks,
        puzzle: &'a Puzzle,
        run: &'a FullRun,
    ) -> Judged<'a> {
        let cases = self.cases(puzzle);
        let Some(case) = cases.iter_mut().find(|c| c.name == run.case) else {
            let d = Diagnostic::new(
                spec::diag::Kind::LaunchError,
                format!("the GPU worker has no full case `{}`", run.case),
            );
            return Judged::Early(RunOutput::failed(d));
        };
        // Resolving a declared launch changes the case; what it was is put back afterwards.
        let saved = (
            case.job.launch,
            case.job.work,
            case.outputs_per_block,
            case.block_tile,
        );
        let macros = case.macros.clone();
        let source = Source {
            code: &run.code,
            file: &run.file,
            macros: &macros,
        };
        let resolved = match puzzle.declared_launch {
            None => Ok(()),
            Some(_) => match declared_ptx(&source) {
                Ok(Compiled::Ptx(ptx)) => {
                    puzzle.resolve_launch(&ptx, &run.file, std::slice::from_mut(case))
                }
                Ok(Compiled::Cubin(_)) => unreachable!("a PTX target gives PTX"),
                Err(d) => Err(d),
            },
        };
        let out = match resolved {
            Ok(()) => crate::execute(&source, &case.job),
            Err(d) => RunOutput::failed(d),
        };
        Judged::Ran {
            out,
            judge: Box::new(move |out| {
                let summary = (hooks.judge)(puzzle, run, case, out);
                (
                    case.job.launch,
                    case.job.work,
                    case.outputs_per_block,
                    case.block_tile,
                ) = saved;
                summary
            }),
        }
    }
}

/// The PTX a declared launch is read from.
fn declared_ptx(source: &Source<'_>) -> Result<Compiled, Diagnostic> {
    let _ptx = crate::trace::phase("PTX for the declared launch");
    nvrtc::compile(source, &Target::Ptx)
}

/// A full case after its launch: its output, and the judge to give it to once the worker has
/// added what the kernel printed.
pub enum Judged<'a> {
    /// It never reached its case (no such case).
    Early(RunOutput),
    Ran {
        out: RunOutput,
        judge: Box<dyn FnOnce(RunOutput) -> serde_json::Value + 'a>,
    },
}

fn stub(case: &Case) -> Stub {
    let mut job = case.job.clone_without_data();
    job.constants.clear();
    Stub {
        name: case.name.clone(),
        macros: case.macros.clone(),
        job,
    }
}

/// [`Job::clone`] without the input arrays (a full case's are hundreds of megabytes).
trait WithoutData {
    fn clone_without_data(&self) -> Job;
}

impl WithoutData for Job {
    fn clone_without_data(&self) -> Job {
        Job {
            kernel: self.kernel.clone(),
            launch: self.launch,
            args: self
                .args
                .iter()
                .map(|a| match a {
                    Arg::Input { name, .. } => Arg::Input {
                        name: name.clone(),
                        data: vec![],
                    },
                    other => other.clone(),
                })
                .collect(),
            constants: self.constants.clone(),
            tensor_maps: self.tensor_maps.clone(),
            budget: self.budget,
            work: self.work,
        }
    }
}

/// A runner-side stand-in for a full case the worker keeps: its name, macros and job without
/// data, and no reference (the worker judges it).
pub fn case_of(stub: Stub) -> Case {
    Case {
        name: stub.name,
        job: stub.job,
        macros: stub.macros,
        expected: vec![],
        scale: Scale::Full,
        outputs_per_block: None,
        block_tile: None,
    }
}
