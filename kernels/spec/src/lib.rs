//! The puzzle spec: what a puzzle crate declares and the runner reads.
//!
//! A puzzle is data plus a CPU reference. [`Puzzle`] holds the fixed facts (id, title, grade,
//! entry name and parameter list, hints, budget, tolerance, chapter); [`Puzzle::cases`] builds the
//! named cases, each already carrying the reference's expected output (computed in f64). The id
//! `puzzle-NN` names the crate, the folder, the solution stem and the chapter file alike.
//!
//! Beside the spec: the contract between the runner and a backend ([`job`]: what to launch,
//! what came back; [`diag`]: the diagnostics), the launch shapes a kernel file declares
//! ([`shape`], [`tile_shape`], [`gemm_shape`]), the entry signature check ([`entry`]) and the
//! cache of full-scale references ([`refcache`]). This crate may import only `ptx` (to read a
//! declared launch from the PTX); the simulator, the toolchain, the GPU backend, the puzzles
//! and the runner all sit above it.

pub mod diag;
mod encoder_limits;
pub mod entry;
pub mod gemm_shape;
pub mod job;
pub mod refcache;
pub mod shape;
pub mod tensor_maps;
pub mod tile_shape;

pub use diag::{Diagnostic, Kind};
pub use encoder_limits::EncoderRefusal;
pub use job::{Arg, Budget, ConstUpload, Job, Launch, RunOutput, TENSOR_CORE_BUDGET, TileReads};
pub use refcache::cache_dir;

use crate::gemm_shape::GemmShape;
use crate::shape::LaunchShape;
use crate::tile_shape::TileShape;

/// The C type of one kernel parameter, as the PTX entry must declare it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// `const float*`, an input: a `.u64` parameter in PTX.
    ConstF32Ptr,
    /// `float*`, an output: a `.u64` parameter in PTX (PTX cannot tell the two apart).
    F32Ptr,
    /// `int`: a `.u32` or `.s32` parameter in PTX.
    I32,
}

impl ParamType {
    pub fn c_name(self) -> &'static str {
        match self {
            ParamType::ConstF32Ptr => "const float*",
            ParamType::F32Ptr => "float*",
            ParamType::I32 => "int",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub ty: ParamType,
}

/// Allowed difference between a result and the reference: `|x - ref| <= atol + rtol * |ref|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
}

impl Tolerance {
    pub fn accepts(&self, got: f32, want: f64) -> bool {
        let got = f64::from(got);
        got.is_finite() && (got - want).abs() <= self.atol + self.rtol * want.abs()
    }
}

/// Which backends may run a case. As an argument to [`Puzzle::cases`], `Small` asks for the
/// small cases only and `Full` for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scale {
    /// Small enough for the simulator (and run on the GPU too where there is one).
    Small,
    /// Real scale: GPU only.
    Full,
}

/// One named case: the arguments, the launch, the macros, and the expected output.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub name: String,
    pub job: Job,
    /// Macros defined when compiling for this case (`-D NAME=VALUE`).
    pub macros: Vec<(String, String)>,
    /// The reference output, one value per element of the (single) output buffer.
    pub expected: Vec<f64>,
    pub scale: Scale,
    /// For a launch the kernel declares (puzzle 08), set by [`Puzzle::resolve_launch`]: block `b`
    /// owns outputs `b * N .. (b + 1) * N`; which of its threads computes which is the kernel's
    /// own choice.
    pub outputs_per_block: Option<u32>,
    /// For an implicit-GEMM launch the kernel declares (puzzle 11), set by
    /// [`Puzzle::resolve_launch`]: BLOCK_M and BLOCK_N. The output is M rows of `output_channels`;
    /// block (x, y) owns rows x * BLOCK_M .. and columns y * BLOCK_N .. of it.
    pub block_tile: Option<[u32; 2]>,
}

impl Case {
    /// The case's integer arguments by name, for reports (`params` in `--json`).
    pub fn params(&self) -> Vec<(String, i32)> {
        let mut params: Vec<(String, i32)> = self
            .job
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::I32 { name, value } => Some((name.clone(), *value)),
                _ => None,
            })
            .collect();
        params.extend(
            self.macros
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.parse().ok()?))),
        );
        params
    }
}

/// Everything the runner needs to know about one puzzle.
#[derive(Clone, Copy, Debug)]
pub struct Puzzle {
    /// `puzzle-NN`: folder, crate suffix, solution stem, chapter file and CLI argument.
    pub id: &'static str,
    pub title: &'static str,
    /// 1 (first contact) to 5 (performance engineering).
    pub grade: u8,
    /// The `extern "C"` entry point the learner writes.
    pub kernel: &'static str,
    pub params: &'static [Param],
    /// One line: what the puzzle teaches.
    pub teaches: &'static str,
    /// Staged hints, gentlest first.
    pub hints: &'static [&'static str],
    pub budget: Option<Budget>,
    pub tolerance: Tolerance,
    /// Builds the named cases (deterministic: seeded). Full-scale cases, whose reference takes
    /// time to compute, are built only when asked for.
    pub cases: fn(Scale) -> Vec<Case>,
    /// Smaller versions of a failing case, smallest first, for reporting a minimal failure.
    pub shrink: Option<fn(&Case) -> Vec<Case>>,
    /// Set where the kernel file chooses its own launch (puzzle 08): the cases' launches are
    /// placeholders until [`Puzzle::resolve_launch`] fills them from the compiled PTX.
    pub declared_launch: Option<DeclaredLaunch>,
    /// Cases drawn from a seed at grading time ([`Puzzle::graded_cases`]): every published
    /// case's sizes with new data (named `fresh-<case>`), and cases of random sizes within the
    /// contract (`fresh-random-size-N`). For [`Scale::Full`], the full-scale cases with new data too.
    /// The same seed draws the same cases.
    pub fresh: Option<fn(u64, Scale) -> Vec<Case>>,
    /// The seed `runner grade` draws fresh cases from (`None`: the published cases only, as
    /// `check` runs them). Set by [`Puzzle::drawn`].
    pub draw: Option<u64>,
}

/// The prefix of a case drawn fresh at grading time: its reference is never cached
/// ([`refcache::cached`]), and a grader counts `fresh-<case>` with `<case>` as one test.
pub const FRESH: &str = "fresh-";

/// Mixed into a grading seed for the stream that draws fresh cases' sizes, apart from the one
/// that draws the published cases' new data (so that drawing the full cases or not leaves the
/// small ones the same).
pub const FRESH_SIZES: u64 = 0x05ee_d0f5_12e5;

/// A launch the kernel file declares in the int array `symbol` (see [`crate::shape`]). Cases of
/// such a puzzle are built with [`DeclaredLaunch::PLACEHOLDER`], a launch of no blocks that no
/// backend runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeclaredLaunch {
    pub symbol: &'static str,
    pub rule: LaunchRule,
}

/// How a declared shape becomes a case's launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchRule {
    /// `{THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES}` (puzzle 08): ceil(outputs / OUTPUTS_PER_BLOCK)
    /// blocks.
    Linear,
    /// `{BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS}` (puzzle 10): one block per output tile, the staged
    /// input region in dynamic shared memory ([`crate::tile_shape`]).
    Tiles2d,
    /// `{THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES}` (puzzle 11): one block per BLOCK_M x BLOCK_N
    /// tile of the implicit GEMM's M x output_channels product ([`crate::gemm_shape`]).
    Gemm,
}

impl DeclaredLaunch {
    pub const PLACEHOLDER: Launch = Launch {
        grid: [0, 1, 1],
        block: [0, 1, 1],
        shared_bytes: 0,
    };
}

impl Puzzle {
    /// This puzzle with fresh cases drawn from `seed` ([`Puzzle::fresh`]).
    pub fn drawn(self, seed: u64) -> Puzzle {
        Puzzle {
            draw: Some(seed),
            ..self
        }
    }

    /// The cases a check runs: the published ones ([`Puzzle::cases`]) and, when a seed is set
    /// ([`Puzzle::drawn`]), the fresh ones beside them. With a seed, the published full-scale
    /// cases give way to fresh ones of the same sizes (a table of published outputs then holds
    /// nothing a grade asks for).
    pub fn graded_cases(&self, scale: Scale) -> Vec<Case> {
        let mut cases = (self.cases)(scale);
        if let (Some(seed), Some(fresh)) = (self.draw, self.fresh) {
            cases.retain(|c| c.scale == Scale::Small);
            cases.extend(fresh(seed, scale));
        }
        cases
    }

    /// The puzzle's name as the GPU worker is asked for it: `puzzle-04`, or `puzzle-04@SEED` when
    /// fresh cases are drawn ([`Puzzle::from_wire`] reads it back).
    pub fn wire_id(&self) -> String {
        match self.draw {
            Some(seed) => format!("{}@{seed}", self.id),
            None => self.id.to_string(),
        }
    }

    /// `wire` split into the puzzle's id and its seed ([`Puzzle::wire_id`]).
    pub fn from_wire(wire: &str) -> (&str, Option<u64>) {
        match wire.split_once('@') {
            Some((id, seed)) => (id, seed.parse().ok()),
            None => (wire, None),
        }
    }

    /// The chapter's file inside the book's `src/`.
    pub fn chapter_file(&self) -> String {
        format!("{}.md", self.id)
    }

    /// The learner's kernel, relative to the workspace root.
    pub fn kernel_path(&self) -> String {
        format!("puzzles/{}/kernel.cu", self.id)
    }

    /// The reference solution, relative to the workspace root.
    pub fn solution_path(&self) -> String {
        format!("solutions/{}.cu", self.id)
    }

    /// Sets each case's launch from the shape the kernel declares in `ptx` (compiled from
    /// `file`), when the puzzle lets the kernel choose, and its tensor maps from those the
    /// kernel declares ([`tensor_maps`]); otherwise leaves the cases as they are.
    /// The grid follows from the declared shape and the case's size ([`LaunchRule`]).
    pub fn resolve_launch(
        &self,
        ptx: &str,
        file: &str,
        cases: &mut [Case],
    ) -> Result<(), Diagnostic> {
        let Some(declared) = self.declared_launch else {
            return Ok(());
        };
        // The tensor maps the kernel declares, evaluated for each case; none where it declares
        // none (a case a warm worker keeps may have carried another kernel's).
        let maps = tensor_maps::declared(ptx, file)?.unwrap_or_default();
        for case in cases.iter_mut() {
            case.job.tensor_maps = tensor_maps::resolve(&maps, &case.job, &case.macros)
                .map_err(|why| shape::impossible(file, why.to_string()))?;
        }
        // Whole blocks run, so the instruction budget scales from the outputs they cover.
        let rescale = |case: &mut Case, covered: u64| {
            let outputs =
                (case.job.output_pitch()).map_or(case.expected.len(), |p| p.rows * p.cols);
            let per_output = case.job.work / outputs.max(1) as u64;
            case.job.work = case.job.work.max(covered * per_output);
            // A budget per output keeps counting the problem's outputs: a larger declared tile
            // must not raise what it allows.
        };
        match declared.rule {
            LaunchRule::Linear => {
                let shape = LaunchShape::from_ptx(ptx, declared.symbol, file)?;
                for case in cases {
                    case.job.launch = shape.launch(case.expected.len());
                    case.outputs_per_block = Some(shape.outputs_per_block);
                    let covered = case.job.launch.blocks() * u64::from(shape.outputs_per_block);
                    rescale(case, covered);
                }
            }
            LaunchRule::Tiles2d => {
                let shape = TileShape::from_ptx(ptx, declared.symbol, file)?;
                for case in cases {
                    case.job.launch = shape.launch(&case.job, file)?;
                    let inside = shape.staged_inside(&case.job);
                    if let Some(b) = case
                        .job
                        .budget
                        .as_mut()
                        .filter(|b| b.staged_reads.is_some())
                    {
                        b.staged_region = inside;
                    }
                    let tile = u64::from(shape.tile_rows) * u64::from(shape.tile_cols);
                    rescale(case, case.job.launch.blocks() * tile);
                }
            }
            LaunchRule::Gemm => {
                let shape = GemmShape::from_ptx(ptx, declared.symbol, file)?;
                for case in cases {
                    case.job.launch = shape.launch(&case.job, file)?;
                    case.block_tile = Some([shape.block_m, shape.block_n]);
                    rescale(case, case.job.launch.blocks() * shape.tile());
                }
            }
        }
        Ok(())
    }
}

/// Builds a [`Job`] for the two-input, one-output, two-int shape shared by puzzles 01 to 08.
pub struct ConvArgs<'a> {
    pub names: [&'static str; 5],
    pub input: &'a [f32],
    pub kernel: &'a [f32],
    pub out_len: usize,
    pub sizes: [i32; 2],
}

impl ConvArgs<'_> {
    pub fn job(
        &self,
        entry: &str,
        launch: Launch,
        budget: Option<Budget>,
        constants: Vec<ConstUpload>,
    ) -> Job {
        let [a, b, out, n, k] = self.names;
        Job {
            kernel: entry.to_string(),
            launch,
            args: vec![
                Arg::Input {
                    name: a.into(),
                    data: self.input.to_vec(),
                },
                Arg::Input {
                    name: b.into(),
                    data: self.kernel.to_vec(),
                },
                Arg::Output {
                    name: out.into(),
                    len: self.out_len,
                },
                Arg::I32 {
                    name: n.into(),
                    value: self.sizes[0],
                },
                Arg::I32 {
                    name: k.into(),
                    value: self.sizes[1],
                },
            ],
            constants,
            tensor_maps: vec![],
            budget,
            work: (self.out_len as u64) * (self.kernel.len() as u64),
        }
    }
}

/// A small deterministic generator (SplitMix64) for seeded random cases: the same seed gives the
/// same case on every machine, with no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// A size in `lo..=hi` (`lo` when the range is empty).
    pub fn size(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            return lo;
        }
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// One of `choices` (which must not be empty).
    pub fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.size(0, choices.len() - 1)]
    }

    /// `n` values uniform in [-1, 1), none of them zero, so that a skipped term always shows.
    pub fn signal(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                let v = self.uniform(-1.0, 1.0);
                if v.abs() < 1e-3 { 0.5 } else { v }
            })
            .collect()
    }
}
