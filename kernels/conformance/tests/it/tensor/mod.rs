//! Helpers of the GPU test of the tensor cores (`gpu_mma`) that need no GPU: the simulator's
//! side of a comparison, the tally of bit-identical elements, exact random operands and the
//! report folder (`$MMA_REPORT`); `sim_mma` and `sim_wmma` use its one-block [`job`].

#![allow(dead_code)]

use spec::Rng;
use spec::job::{Arg, Job, Launch};

/// The fixture's sm_90 (or sm_90a) PTX.
pub fn ptx(name: &str) -> String {
    let dir = std::env::var("MMA_FIXTURES")
        .unwrap_or_else(|_| format!("{}/tests/fixtures", env!("CARGO_MANIFEST_DIR")));
    // A fixture of sm_90a instructions (`wgmma`) has only that PTX.
    std::fs::read_to_string(format!("{dir}/{name}.sm90.ptx"))
        .or_else(|_| std::fs::read_to_string(format!("{dir}/{name}.sm90a.ptx")))
        .expect("the fixture's PTX")
}

/// Appends `line` to `$MMA_REPORT/name` when that folder is set.
pub fn log(name: &str, line: &str) {
    if let Ok(dir) = std::env::var("MMA_REPORT") {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(format!("{dir}/{name}"))
            .expect("report file");
        writeln!(f, "{line}").expect("report written");
    }
}

/// `kernel(inputs..., out)` in one block of `threads` threads.
pub fn job(kernel: &str, inputs: &[Vec<f32>], out: usize, threads: u32) -> Job {
    let mut args: Vec<Arg> = inputs
        .iter()
        .enumerate()
        .map(|(i, d)| Arg::Input {
            name: format!("in{i}"),
            data: d.clone(),
        })
        .collect();
    args.push(Arg::Output {
        name: "out".into(),
        len: out,
    });
    Job {
        kernel: kernel.into(),
        launch: Launch::linear(1, threads),
        args,
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    }
}

/// `job` on the simulator (the fixture's sm_90 PTX); its output as bits.
pub fn sim(name: &str, kernel: &str, inputs: &[Vec<f32>], out: usize, threads: u32) -> Vec<u32> {
    let o = sim::run(&ptx(name), &job(kernel, inputs, out, threads));
    assert!(o.diagnostics.is_empty(), "{kernel}: {:#?}", o.diagnostics);
    o.outputs[0].iter().map(|x| x.to_bits()).collect()
}

/// Bit-identical, beyond-tolerance and total element counts.
#[derive(Default)]
pub struct Tally {
    pub same: usize,
    pub beyond: usize,
    pub all: usize,
    worst: f64,
    first_diff: Option<String>,
}

impl Tally {
    /// Counts one element; `context` (the operands) goes to the report when the bits differ.
    pub fn add(&mut self, what: &str, dev: u32, sim: u32, tol: f64, context: &dyn Fn() -> String) {
        self.all += 1;
        if dev == sim {
            self.same += 1;
            return;
        }
        let (d, s) = (
            f64::from(f32::from_bits(dev)),
            f64::from(f32::from_bits(sim)),
        );
        let err = (d - s).abs();
        self.worst = self.worst.max(err / tol.max(f64::MIN_POSITIVE));
        self.beyond += usize::from(err > tol || err.is_nan());
        let line = format!(
            "{what}: device {d:e} ({dev:#010x}), sim {s:e} ({sim:#010x}); {}",
            context()
        );
        log("mismatches.txt", &line);
        self.first_diff.get_or_insert(line);
    }
    pub fn report(&self, what: &str) {
        println!(
            "{what}: {}/{} bit-identical ({:.3}%), {} beyond tf32 tolerance, largest difference {:.3} of it{}",
            self.same,
            self.all,
            100.0 * self.same as f64 / self.all.max(1) as f64,
            self.beyond,
            self.worst,
            self.first_diff
                .as_ref()
                .map_or(String::new(), |d| format!("; first: {d}"))
        );
    }
}

/// A value with `p` significant bits and exponent in `emin..=emax` (exact in the format).
pub fn val(r: &mut Rng, p: i32, emin: i32, emax: i32) -> f64 {
    let e = emin + (r.next_u64() % (emax - emin + 1) as u64) as i32;
    let m = (1u64 << (p - 1)) + r.next_u64() % (1u64 << (p - 1));
    let s = if r.next_u64().is_multiple_of(2) {
        1.0
    } else {
        -1.0
    };
    s * m as f64 * 2f64.powi(e - p + 1)
}

/// The 16 bits of `x` in f16 (`p` = 11) or bf16 (`p` = 8); `x` is exact in the format.
pub fn half_bits(p: i32, x: f64) -> u32 {
    if p == 11 {
        f16_bits(x)
    } else {
        (x as f32).to_bits() >> 16
    }
}

pub fn f16_bits(x: f64) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let e = x.abs().log2().floor() as i32;
    let m = (x.abs() / 2f64.powi(e) - 1.0) * 1024.0;
    u32::from(x < 0.0) << 15 | ((e + 15) as u32) << 10 | m as u32
}

/// tf32-level tolerance for one output: 2^-10 of the sum of the terms' magnitudes.
pub fn tolerance(a: &[f64], b: &[f64], c: f64) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x * y).abs()).sum::<f64>() + c.abs()) * 2f64.powi(-10)
}

/// The `wgmma` fixture's kernels and their operands (`sim_wgmma`, `gpu_mma`).
pub mod wgmma {
    use super::{half_bits, val};
    use spec::Rng;

    /// The operands of one kernel of the fixture, from its name `wg_{ty}_n{N}_{swizzle}...`.
    pub struct Form {
        pub p: i32,
        pub n: usize,
        pub k: usize,
        pub neg: bool,
    }

    pub fn form(name: &str) -> Form {
        let parts: Vec<&str> = name.split('_').collect();
        let (ty, n, sw) = (parts[1], parts[2][1..].parse().unwrap(), parts[3]);
        let es = if ty == "tf32" { 4 } else { 2 };
        let kbytes = match sw {
            "none" | "b64" => 64,
            "b32" => 32,
            _ => 128,
        };
        Form {
            p: match ty {
                "tf32" => 11,
                "f16" => 11,
                _ => 8,
            },
            n,
            k: kbytes / es,
            neg: name.ends_with("_neg"),
        }
    }

    /// Inputs as the kernel takes them, the f64 result and each element's sum of magnitudes.
    pub type Case = (Vec<Vec<f32>>, Vec<f64>, Vec<f64>);

    /// Random exact operands (`small`: few bits and exponents, so that every sum is exact).
    pub fn case(name: &str, r: &mut Rng, small: bool, scale_d: bool) -> Case {
        let f = form(name);
        let (p, lo, hi) = match (small, name.contains("tf32")) {
            (true, _) => (4, -2, 0),
            // tf32 words of full f32 precision: the tensor core ignores their low 13 bits.
            (false, true) => (24, -8, 4),
            (false, false) => (f.p, -8, 4),
        };
        let word = |x: f64| {
            if name.contains("tf32") {
                x as f32
            } else {
                f32::from_bits(half_bits(f.p, x))
            }
        };
        let a: Vec<f64> = (0..64 * f.k).map(|_| val(r, p, lo, hi)).collect();
        let b: Vec<f64> = (0..f.n * f.k).map(|_| val(r, p, lo, hi)).collect();
        let c: Vec<f32> = (0..64 * f.n).map(|_| val(r, p, lo, hi) as f32).collect();
        let sa = if f.neg { -1.0 } else { 1.0 };
        let sum = |abs: bool| -> Vec<f64> {
            let v = |x: f64| if abs { x.abs() } else { x };
            (0..64 * f.n)
                .map(|i| {
                    let (row, col) = (i / f.n, i % f.n);
                    let dot: f64 = (0..f.k)
                        .map(|j| v(a[row * f.k + j] * b[col * f.k + j]))
                        .sum();
                    v(sa * dot) + if scale_d { v(f64::from(c[i])) } else { 0.0 }
                })
                .collect()
        };
        let (want, mag) = (sum(false), sum(true));
        let inputs = vec![
            a.iter().map(|&x| word(x)).collect(),
            b.iter().map(|&x| word(x)).collect(),
            c,
            vec![if scale_d { 1.0 } else { 0.0 }],
        ];
        (inputs, want, mag)
    }

    /// Every kernel of the fixture but the two that misuse the asynchrony.
    pub fn kernels() -> Vec<String> {
        let ptx = super::ptx("wgmma");
        ptx.lines()
            .filter_map(|l| l.strip_prefix(".visible .entry "))
            .map(|l| l.split('(').next().unwrap().to_string())
            .filter(|k| !k.ends_with("_nowait") && !k.ends_with("_clobber"))
            .collect()
    }
}
