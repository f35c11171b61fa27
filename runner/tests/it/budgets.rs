//! The budgets count the work each lesson is about, however the kernel is written (issue 45): a
//! property over rewrites, for every puzzle whose lesson a budget holds (04, 05, 06, 10, 11, 12).
//!
//! `fixtures/rewrites/puzzle-NN/honest/` holds correct kernels written other ways than the
//! solution (float2 and float4 loads, unfused or combined products, `__fmul_rn` and `__fmaf_rn`,
//! unrolls, other tile shapes and warp layouts, pointer aliases, helper functions, a K remainder on
//! the FP32 units): each must pass every case on the simulator with no diagnostic. With them run
//! the solutions, and puzzles 11 and 12's solutions with other tile shapes (their `#ifndef`
//! macros defined first). `fixtures/rewrites/puzzle-NN/skipping/` holds kernels that skip the
//! lesson (no tile, the tile loaded twice, the window read from global memory, taps not from
//! `c_kernel`, products without the register window, giant declared tiles, FP32, f64 or half2
//! products, products hidden as quotients, a token `mma.sync`; some written as edits of the FP32
//! fixtures, [`MUTANTS`]): each must fail with `budget_exceeded`.
//!
//! Each kernel's figure per budget is its worst case's count over what the case allows (above 1
//! is over the budget), printed as a table of the solution's figure and the ranges of the honest
//! and the skipping rewrites (`cargo test --release -p runner --test it budgets:: -- --nocapture`).

use crate::common;

use common::repo;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Puzzles 11 and 12's solutions with other shapes: the macros defined before the file.
const SHAPES: &[(&str, &str)] = &[
    ("puzzle-11", "#define BLOCK_M 64\n#define BLOCK_N 64\n"),
    ("puzzle-11", "#define WARPS_M 4\n#define WARPS_N 1\n"),
    ("puzzle-11", "#define STAGES 3\n#define BLOCK_K 16\n"),
    ("puzzle-11", "#define FAST_TF32 0\n"),
    ("puzzle-12", "#define MT 1\n"),
    ("puzzle-12", "#define NT 2\n#define WARPS 8\n"),
    ("puzzle-12", "#define WARPS 4\n#define MT 1\n"),
];

/// Lesson-skipping kernels written as edits of a kernel of `runner/tests/fixtures/` (the FP32
/// kernels, or an honest rewrite with its lesson's step taken out: a second copy of a kernel
/// would drift): its name, its puzzle, the file and the edits.
type Mutant = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const P11_FP32: &str = "runner/tests/fixtures/p11_fp32.cu";
const P12_FP32: &str = "runner/tests/fixtures/p12_fp32.cu";
const P11_PRODUCT: &str = "sum += input[((b * input_rows + r + i) * input_cols + c + j) * input_channels + ch] *\n                       weight[((i * kernel_cols + j) * input_channels + ch) * output_channels + o];";
const P12_PRODUCT: &str = "sum += tile[threadIdx.x + j] * kernel[j];";

const P06_FMUL: &str = "runner/tests/fixtures/rewrites/puzzle-06/honest/fmul_rn.cu";
const P06_PAIRS: &str = "runner/tests/fixtures/rewrites/puzzle-06/honest/two_taps_per_step.cu";
const P10_ONE: &str = "runner/tests/fixtures/rewrites/puzzle-10/honest/one_per_thread.cu";
const P06_X: &str = "const float* x = tile + threadIdx.x * R;";
const P06_VOLATILE: &str = "volatile float* x = tile + threadIdx.x * R;";

const MUTANTS: &[Mutant] = &[
    // Puzzle 06 without its window: every product reads its input from the tile (`volatile`, so
    // the compiler keeps the reads), unfused, or two products a step.
    (
        "p06_no_window_fmul",
        "puzzle-06",
        P06_FMUL,
        &[
            (P06_X, P06_VOLATILE),
            (
                "acc[r] = __fadd_rn(acc[r], __fmul_rn(window[r], w));",
                "acc[r] = __fadd_rn(acc[r], __fmul_rn(x[j + r], w));",
            ),
        ],
    ),
    (
        "p06_pairs_from_the_tile",
        "puzzle-06",
        P06_PAIRS,
        &[
            (P06_X, P06_VOLATILE),
            (
                "acc[r] += win[r] * w0 + win[r + 1] * w1;",
                "acc[r] += x[j + r] * w0 + x[j + r + 1] * w1;",
            ),
        ],
    ),
    // Puzzle 10 staging its region and then summing from global memory anyway.
    (
        "p10_staged_unused",
        "puzzle-10",
        P10_ONE,
        &[(
            "__fmul_rn(region[(threadIdx.y + i) * w + threadIdx.x + j],",
            "__fmul_rn(input[(r + i) * input_stride + c + j],",
        )],
    ),
    // The products in double precision, on the FP64 units.
    (
        "p11_f64_sum",
        "puzzle-11",
        P11_FP32,
        &[
            ("float sum = 0.0f;", "double sum = 0.0;"),
            ("sum += input[", "sum += (double)input["),
            (
                "                       weight[",
                "                       (double)weight[",
            ),
            ("= sum;", "= (float)sum;"),
        ],
    ),
    (
        "p12_f64_sum",
        "puzzle-12",
        P12_FP32,
        &[
            ("float sum = 0.0f;", "double sum = 0.0;"),
            (
                P12_PRODUCT,
                "sum = fma((double)tile[threadIdx.x + j], (double)kernel[j], sum);",
            ),
            ("= sum;", "= (float)sum;"),
        ],
    ),
    // `__fadd_rn(sum, __fmul_rn(x, w))`: a multiply and an add, no fused multiply-add.
    (
        "p11_fmul_rn",
        "puzzle-11",
        P11_FP32,
        &[(
            P11_PRODUCT,
            "sum = __fadd_rn(sum, __fmul_rn(input[((b * input_rows + r + i) * input_cols + c + j) * input_channels + ch],\n                       weight[((i * kernel_cols + j) * input_channels + ch) * output_channels + o]));",
        )],
    ),
    (
        "p12_fmul_rn",
        "puzzle-12",
        P12_FP32,
        &[(
            P12_PRODUCT,
            "sum = __fadd_rn(sum, __fmul_rn(tile[threadIdx.x + j], kernel[j]));",
        )],
    ),
    // No multiply at all: each product a quotient, x / (1 / w) (puzzle 11's weights are at least
    // 0.1 in magnitude; a zero tap of puzzle 12 gives x / inf = 0). Only the tensor-core check
    // sees it.
    (
        "p11_quotients",
        "puzzle-11",
        P11_FP32,
        &[(
            P11_PRODUCT,
            "sum += input[((b * input_rows + r + i) * input_cols + c + j) * input_channels + ch] /\n                       (1.0f / weight[((i * kernel_cols + j) * input_channels + ch) * output_channels + o]);",
        )],
    ),
    (
        "p12_quotients",
        "puzzle-12",
        P12_FP32,
        &[(
            P12_PRODUCT,
            "sum += tile[threadIdx.x + j] / (1.0f / kernel[j]);",
        )],
    ),
    // One `mma.sync` per warp, on zeros, for show; the sum on the FP32 units.
    (
        "p11_token_mma",
        "puzzle-11",
        P11_FP32,
        &[
            (
                "    int out_rows = input_rows",
                "    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n    unsigned z = 0;\n    asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%4,%4}, {%0,%1,%2,%3};\"\n                 : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]) : \"r\"(z));\n    int out_rows = input_rows",
            ),
            (
                "float sum = 0.0f;",
                "float sum = d[0] + d[1] + d[2] + d[3];",
            ),
        ],
    ),
];

/// `runner check PUZZLE --kernel FILE --backend sim --json`: passed, the diagnostics, the cases.
fn check(puzzle: &str, file: &Path) -> (bool, Vec<Value>, Vec<Value>) {
    let v = common::check_json(puzzle, file, "sim", &[]);
    let list = |k: &str| v[k].as_array().cloned().unwrap_or_default();
    (v["passed"] == true, list("diagnostics"), list("cases"))
}

/// The figure of puzzle 05's `kernel`, which allows no read at all: the reads.
const UNREAD: &str = "05 reads of `kernel` (allowed: 0)";

/// Whether figure `x` of budget `name` is over it.
fn over(name: &str, x: f64) -> bool {
    if name == UNREAD { x > 0.0 } else { x > 1.0 }
}

/// Each budget's figure for one run: its worst case's count over what that case allows (above 1:
/// over the budget), from the cases' stats and the puzzle's budgets.
fn figures(puzzle: &str, cases: &[Value]) -> Figures {
    let spec = runner_puzzle(puzzle);
    let budgets: BTreeMap<String, spec::Budget> = (spec.cases)(spec::Scale::Small)
        .into_iter()
        .filter_map(|c| Some((c.name, c.job.budget?)))
        .collect();
    let mut out = BTreeMap::new();
    let mut worst = |name: &'static str, x: f64| {
        let e = out.entry(name).or_insert(0.0f64);
        *e = e.max(x);
    };
    let n = |v: &Value, i: usize| v[i].as_f64().unwrap_or(0.0);
    for c in cases {
        let (Some(b), s) = (budgets.get(c["name"].as_str().unwrap_or("")), &c["stats"]) else {
            continue;
        };
        if let Some(reads) = s["unread_reads"].as_f64() {
            worst(UNREAD, reads);
        }
        if let (Some(t), false) = (b.tile_reads, s["tile_reads"].is_null()) {
            let allowed = f64::from(t.tile + t.slack);
            worst(
                "04-06 input read per block / tile",
                n(&s["tile_reads"], 0) / allowed,
            );
        }
        if let (Some((lr, lp)), false) = (
            b.shared_reads_per_product,
            s["shared_reads_products"].is_null(),
        ) {
            let (r, p) = (
                n(&s["shared_reads_products"], 0),
                n(&s["shared_reads_products"], 1),
            );
            let made = if p == 0.0 { f64::INFINITY } else { r / p };
            worst(
                "06 shared reads per product",
                made / (f64::from(lr) / f64::from(lp)),
            );
        }
        if !s["staged_reads"].is_null() {
            let (r, allowed) = (n(&s["staged_reads"], 0), n(&s["staged_reads"], 1));
            worst("10 input reads / staged region", r / allowed.max(1.0));
        }
        if let (Some(limit), Some(per)) = (
            b.cuda_products_per_output,
            s["cuda_products_per_output"].as_f64(),
        ) {
            worst(
                "11-12 CUDA-core products per output",
                per / f64::from(limit),
            );
            if !s["tensor_macs"].is_null() {
                let (done, needed) = (n(&s["tensor_macs"], 0), n(&s["tensor_macs"], 1));
                let wanted = needed - f64::from(limit) * b.outputs as f64;
                let short = if wanted <= 0.0 { 0.0 } else { wanted / done };
                worst("11-12 tensor MACs wanted / done", short);
            }
        }
    }
    out
}

type Figures = BTreeMap<&'static str, f64>;

/// One case's counts in each budget's own units, for the table: the case a chapter quotes.
fn in_units(cases: &[Value]) -> Figures {
    let mut out = Figures::new();
    let at = |name: &str| {
        cases
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| &c["stats"])
    };
    let n = |v: &Value, i: usize| v[i].as_f64();
    let cols = |c: &str, k: &str| at(c).map(|s| s[k].clone()).unwrap_or(Value::Null);
    let names = cases
        .first()
        .map(|c| c["params"].clone())
        .unwrap_or_default();
    if let Some(x) = n(&cols("edge-kernel-2047", "tile_reads"), 0) {
        out.insert("04-06 edge-kernel-2047: input read by one block", x);
    }
    let sp = cols("edge-10000-by-3", "shared_reads_products");
    if let (Some(r), Some(p)) = (n(&sp, 0), n(&sp, 1)) {
        out.insert(
            "06 edge-10000-by-3: shared reads per product (x100)",
            (100.0 * r / p.max(1.0)).round(),
        );
    }
    let st = cols("random-1", "staged_reads");
    if let (Some(r), Some(o)) = (n(&st, 0), n(&st, 2)) {
        out.insert(
            "10 random-1: input reads per output (x100)",
            (100.0 * r / o.max(1.0)).round(),
        );
    }
    let (case, label) = if names.get("input_channels").is_some() {
        (
            "edge-wide-channels",
            "11 edge-wide-channels: CUDA-core products per output",
        )
    } else {
        (
            "edge-kernel-2047",
            "12 edge-kernel-2047: CUDA-core products per output",
        )
    };
    if let Some(x) = cols(case, "cuda_products_per_output").as_f64() {
        out.insert(label, x);
    }
    out
}

fn runner_puzzle(id: &str) -> spec::Puzzle {
    match id {
        "puzzle-04" => puzzle_04::spec(),
        "puzzle-05" => puzzle_05::spec(),
        "puzzle-06" => puzzle_06::spec(),
        "puzzle-10" => puzzle_10::spec(),
        "puzzle-11" => puzzle_11::spec(),
        "puzzle-12" => puzzle_12::spec(),
        other => panic!("no budgeted puzzle {other}"),
    }
}

/// The `.cu` files of `dir`, sorted; none where the folder is absent (git keeps no empty folder:
/// puzzle 12's honest rewrites are all made from its solutions, by macro).
fn kernels(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    files
}

/// One row of the table: a budget's figures for the solutions, the honest and the skipping
/// rewrites.
#[derive(Default)]
struct Row {
    solution: Vec<f64>,
    honest: Vec<f64>,
    skipping: Vec<f64>,
}

fn range(xs: &[f64]) -> String {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0f64, f64::max);
    match xs.len() {
        0 => "-".into(),
        _ if lo == hi => format!("{lo:.2}"),
        _ => format!("{lo:.2} .. {hi:.2}"),
    }
}

#[test]
fn honest_rewrites_pass_and_lesson_skipping_ones_exceed_a_budget() {
    let root = repo().join("runner/tests/fixtures/rewrites");
    let scratch = std::env::temp_dir().join(format!("workbook-budgets-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    // Each budget's figures, and one case's counts in the budget's own units.
    let (mut rows, mut units): (BTreeMap<&str, Row>, BTreeMap<&str, Row>) = Default::default();
    let mut failures = vec![];
    let record = |rows: &mut BTreeMap<&'static str, Row>, which: &str, figs: Figures| {
        for (k, x) in figs {
            let row = rows.entry(k).or_default();
            match which {
                "solution" => row.solution.push(x),
                "honest" => row.honest.push(x),
                _ => row.skipping.push(x),
            }
        }
    };
    let puzzles = [
        "puzzle-04",
        "puzzle-05",
        "puzzle-06",
        "puzzle-10",
        "puzzle-11",
        "puzzle-12",
    ];
    for puzzle in puzzles {
        // The solutions: the one each puzzle names, and the second checked ones.
        let mut honest: Vec<(&str, PathBuf)> = std::fs::read_dir(repo().join("solutions"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(puzzle))
            .map(|p| ("solution", p))
            .collect();
        for (i, (p, defines)) in SHAPES.iter().enumerate().filter(|(_, (p, _))| *p == puzzle) {
            let src = std::fs::read_to_string(repo().join(format!("solutions/{p}.cu"))).unwrap();
            let file = scratch.join(format!("{p}.shape-{i}.cu"));
            std::fs::write(&file, format!("{defines}{src}")).unwrap();
            honest.push(("honest", file));
        }
        let dir = root.join(puzzle);
        honest.extend(
            kernels(&dir.join("honest"))
                .into_iter()
                .map(|f| ("honest", f)),
        );
        assert!(honest.len() >= 4, "{puzzle}: too few honest kernels");
        for (which, file) in &honest {
            let (passed, diagnostics, cases) = check(puzzle, file);
            let figs = figures(puzzle, &cases);
            if !passed || !diagnostics.is_empty() || figs.iter().any(|(k, &x)| over(k, x)) {
                failures.push(format!(
                    "{which} {} should pass cleanly: {figs:?} {diagnostics:#?}",
                    file.display()
                ));
            }
            record(&mut units, which, in_units(&cases));
            record(&mut rows, which, figs);
        }
        let mut skipping = kernels(&dir.join("skipping"));
        for (name, _, base, edits) in MUTANTS.iter().filter(|m| m.1 == puzzle) {
            skipping.push(common::mutate(base, name, edits).0);
        }
        assert!(skipping.len() >= 3, "{puzzle}: too few skipping kernels");
        for file in &skipping {
            let (passed, diagnostics, cases) = check(puzzle, file);
            let figs = figures(puzzle, &cases);
            let budget = diagnostics.iter().any(|d| d["kind"] == "budget_exceeded");
            if passed || !budget || !figs.iter().any(|(k, &x)| over(k, x)) {
                failures.push(format!(
                    "skipping {} should exceed a budget: {figs:?} {diagnostics:#?}",
                    file.display()
                ));
            }
            record(&mut units, "skipping", in_units(&cases));
            record(&mut rows, "skipping", figs);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    println!(
        "{:<40}{:>12}{:>16}{:>22}  (worst case's count / allowance: above 1 fails; reads of `kernel`: above 0)",
        "budget", "solution", "honest", "skipping"
    );
    for (k, r) in &rows {
        println!(
            "{k:<40}{:>12}{:>16}{:>22}",
            range(&r.solution),
            range(&r.honest),
            range(&r.skipping)
        );
    }
    println!(
        "\n{:<58}{:>10}{:>18}{:>22}",
        "one case, in the budget's units", "solution", "honest", "skipping"
    );
    for (k, r) in &units {
        let span = |xs: &[f64]| range(xs).replace(".00", "");
        println!(
            "{k:<58}{:>10}{:>18}{:>22}",
            span(&r.solution),
            span(&r.honest),
            span(&r.skipping)
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every budget was met by honest kernels and broken by skipping ones.
    for (k, r) in &rows {
        assert!(!r.honest.is_empty(), "{k}: no honest kernel measured");
        assert!(
            r.skipping.iter().any(|&x| over(k, x)),
            "{k}: no skipping kernel exceeds it"
        );
    }
}

/// Case `name`'s stats among a run's `cases`.
fn stats<'a>(cases: &'a [Value], name: &str) -> &'a Value {
    &cases
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no case {name}"))["stats"]
}

#[test]
fn the_chapters_budget_figures_are_measured() {
    // A chapter's text with its line breaks as spaces.
    let chapter = |id: &str| {
        let text = std::fs::read_to_string(repo().join(format!("book/src/{id}.md"))).unwrap();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    // Chapter 11: tip 1's FP32 kernel, its tile shape named with its figures.
    let tip1 = repo().join("runner/tests/fixtures/rewrites/puzzle-11/skipping/fp32_tip1.cu");
    assert!(
        std::fs::read_to_string(&tip1)
            .unwrap()
            .contains("{128, 32, 32, 0}")
    );
    let (_, _, cases) = check("puzzle-11", &tip1);
    let per = |c: &str| {
        stats(&cases, c)["cuda_products_per_output"]
            .as_u64()
            .unwrap()
    };
    let sentence = format!(
        "(tip 1's kernel, `{{128, 32, 32, 0}}`: {} against 8 on `edge-rgb-odd-channels`, {} on `edge-wide-channels`)",
        per("edge-rgb-odd-channels"),
        per("edge-wide-channels")
    );
    assert!(chapter("puzzle-11").contains(&sentence), "{sentence}");
    // Chapter 12: puzzle 04's tile summed in FP32.
    let (_, _, cases) = check(
        "puzzle-12",
        &repo().join("runner/tests/fixtures/p12_fp32.cu"),
    );
    let n = stats(&cases, "edge-kernel-2047")["cuda_products_per_output"]
        .as_u64()
        .unwrap();
    assert!(chapter("puzzle-12").contains(&format!("({n} on `edge-kernel-2047`)")));
    // Chapter 04: a kernel without a tile, against the solution's block.
    let (_, _, cases) = check(
        "puzzle-04",
        &repo().join("runner/tests/fixtures/p04_no_tile.cu"),
    );
    let no_tile = &stats(&cases, "edge-kernel-2047")["tile_reads"];
    let (_, _, cases) = check("puzzle-04", &repo().join("solutions/puzzle-04.cu"));
    let solution = &stats(&cases, "edge-kernel-2047")["tile_reads"];
    // The chapter groups thousands with commas.
    let sentence = format!(
        "{} against a tile of {}; the solution's block reads {}",
        no_tile[0], no_tile[1], solution[0]
    );
    assert!(
        chapter("puzzle-04").replace(',', "").contains(&sentence),
        "{sentence}"
    );
}
