//! The cases of puzzles 09 and 10: one list, launched by each puzzle's [`Layout`].
//!
//! - `example-*`: the chapter's literal 3x3 case and a 1x1 identity kernel, dense rows.
//! - `edge-*`: a row-vector and a column-vector kernel, kernel as large as the input (3x4), the
//!   largest kernel (31x31, on 3 x 4 outputs), and tails in both directions: 70 x 45 outputs in blocks that
//!   divide neither.
//! - `pitched` and `random-*`: rows with padding on both sides (input_stride > input_cols, NaN in
//!   the input's padding; output_stride > output_cols, [`PADDING_SENTINEL`] in the output's),
//!   seeded values in [-1, 1) with no zeros, so a skipped tap or a swapped index always shows.
//! - `full-*`: 4096 x 4096 with 3x3 and 15x15, 8192 x 8192 with 5x5 (dense rows), built only
//!   for [`Scale::Full`], their references computed in parallel once and cached
//!   ([`spec::refcache`]).
//!
//! Every small case is at most 100,000 multiply-adds, a few milliseconds on the simulator.

use crate::{Image, reference};
use spec::job::{Arg, Job, Launch, PADDING_SENTINEL};
use spec::{Case, DeclaredLaunch, Rng, Scale};

/// What the input's padding holds: a quiet NaN with a payload of its own, so that an output that
/// took it in (computed NaN is the canonical `0x7fffffff`) or copied it is told apart from the
/// NaN the runner poisons unwritten outputs with (`0x7fc00000`).
pub const INPUT_PADDING: f32 = f32::from_bits(0x7fc0_0bad);

/// The full-scale cases (seed offset, n for an n x n input, k for a k x k kernel), as the chapter's "Contract and launch" lists them.
pub const FULL_SHAPES: [(u64, usize, usize); 3] = [(10, 4096, 3), (11, 4096, 15), (12, 8192, 5)];

/// How a puzzle launches a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Puzzle 09: the runner defines ROW_BLOCK and COL_BLOCK and launches ceil(output_cols /
    /// COL_BLOCK) x ceil(output_rows / ROW_BLOCK) blocks of (COL_BLOCK, ROW_BLOCK) threads.
    Blocks { rows: u32, cols: u32 },
    /// Puzzle 10: the kernel declares its shape; a placeholder until the runner resolves it.
    Declared,
}

impl Layout {
    fn launch(&self, out_rows: usize, out_cols: usize) -> Launch {
        match *self {
            Layout::Blocks { rows, cols } => Launch {
                grid: [
                    out_cols.div_ceil(cols as usize) as u32,
                    out_rows.div_ceil(rows as usize) as u32,
                    1,
                ],
                block: [cols, rows, 1],
                shared_bytes: 0,
            },
            Layout::Declared => DeclaredLaunch::PLACEHOLDER,
        }
    }

    fn macros(&self) -> Vec<(String, String)> {
        match *self {
            Layout::Blocks { rows, cols } => vec![
                ("ROW_BLOCK".into(), rows.to_string()),
                ("COL_BLOCK".into(), cols.to_string()),
            ],
            Layout::Declared => vec![],
        }
    }

    /// The layout a case was built with, read back from its macros (for shrinking).
    pub fn of(case: &Case) -> Layout {
        let get = |name: &str| {
            case.macros
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.parse().ok())
        };
        match (get("ROW_BLOCK"), get("COL_BLOCK")) {
            (Some(rows), Some(cols)) => Layout::Blocks { rows, cols },
            _ => Layout::Declared,
        }
    }
}

/// A 2D case: `kernel` (kr x kc, dense) over `input`, the output rows `out_pad` floats longer
/// than the output is wide.
pub fn case(
    name: &str,
    layout: Layout,
    input: &Image,
    kernel: &Image,
    out_pad: usize,
    scale: Scale,
) -> Case {
    owned_case(name, layout, input.clone(), kernel, out_pad, scale)
}

/// [`case`], its input moved into the job rather than copied (a full case's is 256 MB).
fn owned_case(
    name: &str,
    layout: Layout,
    input: Image,
    kernel: &Image,
    out_pad: usize,
    scale: Scale,
) -> Case {
    assert!(
        kernel.rows >= 1
            && kernel.cols >= 1
            && kernel.rows <= input.rows
            && kernel.cols <= input.cols,
        "{name}: need 1 <= kernel <= input in both directions"
    );
    let (out_rows, out_cols) = (input.rows - kernel.rows + 1, input.cols - kernel.cols + 1);
    let out_stride = out_cols + out_pad;
    let compute = || reference(&input, kernel, out_stride);
    let expected = match scale {
        Scale::Small => compute(),
        Scale::Full => spec::refcache::cached(
            &format!("conv2d-{name}-{out_stride}"),
            &[&input.data, &kernel.data],
            compute,
        ),
    };
    let int = |name: &str, value: usize| Arg::I32 {
        name: name.into(),
        value: value as i32,
    };
    let job = Job {
        kernel: "conv2d".into(),
        launch: layout.launch(out_rows, out_cols),
        args: vec![
            Arg::Input {
                name: "input".into(),
                data: input.data,
            },
            Arg::Input {
                name: "kernel".into(),
                data: kernel.data.clone(),
            },
            Arg::Pitched {
                name: "output".into(),
                rows: out_rows,
                cols: out_cols,
                stride: out_stride,
            },
            int("input_rows", input.rows),
            int("input_cols", input.cols),
            int("input_stride", input.stride),
            int("kernel_rows", kernel.rows),
            int("kernel_cols", kernel.cols),
            int("output_stride", out_stride),
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: (out_rows * out_cols * kernel.rows * kernel.cols) as u64,
    };
    Case {
        name: name.to_string(),
        job,
        macros: layout.macros(),
        expected,
        scale,
        outputs_per_block: None,
        block_tile: None,
    }
}

/// A seeded rows x cols image with `pad` floats of NaN padding per row: values in [-1, 1) with
/// no zeros.
pub fn random_image(rng: &mut Rng, rows: usize, cols: usize, pad: usize) -> Image {
    let stride = cols + pad;
    let mut data = vec![INPUT_PADDING; rows * stride];
    for r in 0..rows {
        data[r * stride..][..cols].copy_from_slice(&rng.signal(cols));
    }
    Image {
        data,
        rows,
        cols,
        stride,
    }
}

/// A seeded input (padded by `pad`) and a dense kernel whose taps are all at least 0.1 in
/// magnitude, so that skipping any one of them moves some output past the tolerance.
pub fn random_data(
    seed: u64,
    input: (usize, usize, usize),
    kernel: (usize, usize),
) -> (Image, Image) {
    let mut rng = Rng::new(seed);
    let image = random_image(&mut rng, input.0, input.1, input.2);
    let mut k = random_image(&mut rng, kernel.0, kernel.1, 0);
    for v in &mut k.data {
        *v = v.signum() * (0.1 + 0.9 * v.abs());
    }
    (image, k)
}

/// The cases of a 2D puzzle; `blocks(rows, cols)` is the launch for a small case whose hint is
/// a rows x cols block, `full` the launch of the full-scale ones. `seed` varies the data between
/// the two puzzles, so that a solution copied from one does not pass the other by luck.
pub fn cases(blocks: fn(u32, u32) -> Layout, full: Layout, seed: u64, scale: Scale) -> Vec<Case> {
    let small = Scale::Small;
    let random = |name: &str, layout, s, input, kernel, out_pad| {
        let (x, k) = random_data(seed + s, input, kernel);
        case(name, layout, &x, &k, out_pad, small)
    };
    let nine = Image::dense(3, 3, (1..=9).map(|v| v as f32).collect());
    let corner = Image::dense(2, 2, vec![1., 0., 0., -1.]);
    let odd = Image::dense(
        4,
        5,
        vec![
            3., -1., 4., 1.5, -9., 2.5, 6., -5., 3.5, 5.5, -8., 9.5, 7., -9.5, 3.25, 2., -3., 8.5,
            4.5, -6.,
        ],
    );
    let mut cases = vec![
        case("example-1", blocks(8, 8), &nine, &corner, 0, small),
        case(
            "example-identity",
            blocks(8, 8),
            &odd,
            &Image::dense(1, 1, vec![1.]),
            0,
            small,
        ),
        random("edge-row-kernel", blocks(4, 16), 1, (9, 40, 0), (1, 7), 0),
        random(
            "edge-column-kernel",
            blocks(16, 4),
            2,
            (40, 9, 0),
            (6, 1),
            0,
        ),
        random(
            "edge-kernel-equals-input",
            blocks(8, 8),
            3,
            (3, 4, 0),
            (3, 4),
            0,
        ),
        random(
            "edge-kernel-31x31",
            blocks(8, 8),
            4,
            (33, 34, 0),
            (31, 31),
            0,
        ),
        random("edge-tails", blocks(16, 16), 5, (72, 49, 0), (3, 5), 0),
        random("pitched", blocks(8, 8), 6, (23, 37, 4), (3, 4), 6),
        random("random-1", blocks(8, 32), 7, (48, 64, 3), (7, 5), 5),
        random(
            "random-wide-kernel",
            blocks(16, 8),
            8,
            (30, 60, 1),
            (4, 13),
            2,
        ),
    ];
    if scale == Scale::Full {
        // Each on its own core: a worker builds them while a learner waits for the first check.
        let built: Vec<Case> = std::thread::scope(|scope| {
            let handles: Vec<_> = FULL_SHAPES
                .map(|(s, n, k)| {
                    scope.spawn(move || {
                        let (x, kernel) = random_data(seed + s, (n, n, 0), (k, k));
                        let name = format!("full-{n}x{n}-{k}x{k}");
                        owned_case(&name, full, x, &kernel, 0, Scale::Full)
                    })
                })
                .into_iter()
                .collect();
            let joined = handles.into_iter().map(|h| h.join().expect("no panic"));
            joined.collect()
        });
        cases.extend(built);
    }
    cases
}

/// The cases drawn fresh from `seed` ([`spec::Puzzle::fresh`]) for the puzzle whose published
/// cases are `cases(blocks, full, published, scale)`: each of them at its own sizes, padding and
/// layout with new data (`fresh-<case>`), then three of random sizes within the contract
/// (`fresh-random-size-N`: up to 80 x 80 inputs, kernels up to 31 x 31, at most 100,000
/// multiply-adds).
pub fn fresh(
    blocks: fn(u32, u32) -> Layout,
    full: Layout,
    published: u64,
    seed: u64,
    scale: Scale,
) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut fresh = vec![];
    for c in cases(blocks, full, published, scale) {
        let get = |name: &str| c.job.scalar(name).unwrap_or(0).max(0) as usize;
        let (rows, cols, stride) = (get("input_rows"), get("input_cols"), get("input_stride"));
        let (kr, kc) = (get("kernel_rows"), get("kernel_cols"));
        let out_pad = get("output_stride").saturating_sub(cols + 1 - kc.min(cols));
        let (x, k) = random_data(rng.next_u64(), (rows, cols, stride - cols), (kr, kc));
        let name = format!("{}{}", spec::FRESH, c.name);
        fresh.push(owned_case(&name, Layout::of(&c), x, &k, out_pad, c.scale));
    }
    // A stream of its own, so that the full cases drawn or not leave these the same.
    let mut rng = Rng::new(seed ^ spec::FRESH_SIZES);
    for n in 1..=3 {
        let (rows, cols) = (rng.size(1, 80), rng.size(1, 80));
        let kr = rng.size(1, rows.min(31));
        let most = (100_000 / (kr * (rows - kr + 1) * cols)).max(1);
        let kc = rng.size(1, cols.min(31).min(most));
        let (pad, out_pad) = (rng.size(0, 4), rng.size(0, 6));
        let (r, c) = rng.pick(&[(8, 8), (4, 16), (16, 4), (16, 16), (8, 32), (16, 8)]);
        let (x, k) = random_data(rng.next_u64(), (rows, cols, pad), (kr, kc));
        let name = format!("{}random-size-{n}", spec::FRESH);
        fresh.push(owned_case(
            &name,
            blocks(r, c),
            x,
            &k,
            out_pad,
            Scale::Small,
        ));
    }
    fresh
}

/// Smaller versions of a failing case, smallest first: the same kernel and strides' padding, the
/// top-left corner of the input cut to 1x1, 1x2, 2x2, 3x3, 5x5, 8x8 ... outputs.
pub fn shrink(failing: &Case) -> Vec<Case> {
    let (Arg::Input { data: x, .. }, Arg::Input { data: k, .. }) =
        (&failing.job.args[0], &failing.job.args[1])
    else {
        return vec![];
    };
    let get = |name: &str| failing.job.scalar(name).unwrap_or(0) as usize;
    let (cols, stride) = (get("input_cols"), get("input_stride"));
    let (kr, kc) = (get("kernel_rows"), get("kernel_cols"));
    let Some(out) = failing.job.output_pitch() else {
        return vec![];
    };
    let kernel = Image::dense(kr, kc, k.clone());
    let layout = Layout::of(failing);
    [(1, 1), (1, 2), (2, 2), (3, 3), (5, 5), (8, 8), (13, 13)]
        .into_iter()
        .filter(|&(r, c)| r <= out.rows && c <= out.cols && (r, c) != (out.rows, out.cols))
        .map(|(r, c)| {
            let (ir, ic) = (r + kr - 1, c + kc - 1);
            let pad = stride - cols;
            let mut data = vec![INPUT_PADDING; ir * (ic + pad)];
            for row in 0..ir {
                data[row * (ic + pad)..][..ic].copy_from_slice(&x[row * stride..][..ic]);
            }
            let input = Image {
                data,
                rows: ir,
                cols: ic,
                stride: ic + pad,
            };
            let mut smaller = case(
                &failing.name,
                layout,
                &input,
                &kernel,
                out.stride - out.cols,
                failing.scale,
            );
            smaller.name = format!(
                "{} (cut to {r}x{c} outputs, kernel {kr}x{kc})",
                failing.name
            );
            smaller
        })
        .collect()
}

/// The padding sentinel as the reference holds it.
pub fn sentinel() -> f64 {
    f64::from(PADDING_SENTINEL)
}
