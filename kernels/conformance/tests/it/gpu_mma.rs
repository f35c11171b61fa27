//! The tensor-core family on the device against the simulator: the same fixtures (`mma_sync`,
//! `wmma`, `ldmatrix`, `half2_ops`, `wgmma`) on random fragments, every element within tf32-level
//! tolerance and the share that is bit-identical printed (the goal is all of them).
//!
//! These tests need a CUDA GPU and are `#[ignore]`d; on a GPU machine run them with
//! `--ignored --nocapture`. The device machine has no Rust toolchain and may have no NVRTC or
//! CUDA headers, so each fixture's CUBIN is read from `$MMA_CUBINS/NAME.sm90.cubin` (`wgmma`'s for sm_90a) when that
//! folder is set (`fixtures/gen.py` writes them with `CUBIN_OUT`), and compiled with NVRTC
//! otherwise; `$MMA_FIXTURES` names the folder of the fixtures' PTX where this crate's source is
//! not. `$MMA_REPORT`, when set, names a folder for the device's raw fragment dump and for the
//! operands of every element that is not bit-identical.

#![allow(unsafe_code)] // cudarc's kernel launch is `unsafe fn`; the one call says why it is sound.

use crate::tensor;

use cudarc::driver::{CudaContext, CudaModule, LaunchConfig, PushKernelArg};
use spec::Rng;
use std::sync::Arc;
use tensor::{Tally, f16_bits, half_bits, log, sim, tolerance, val};

fn module(ctx: &Arc<CudaContext>, name: &str) -> (Arc<CudaContext>, Arc<CudaModule>) {
    let cubin = match std::env::var("MMA_CUBINS") {
        Ok(dir) => std::fs::read(format!("{dir}/{name}.sm90.cubin")).expect("the fixture's CUBIN"),
        Err(_) => {
            let path = format!("{}/tests/fixtures/{name}.cu", env!("CARGO_MANIFEST_DIR"));
            let code = std::fs::read_to_string(&path).expect("fixture source");
            let (major, minor) = ctx.compute_capability().expect("compute capability");
            let source = toolchain::nvrtc::Source {
                code: &code,
                file: &path,
                macros: &[],
            };
            match toolchain::nvrtc::compile(
                &source,
                &toolchain::nvrtc::Target::Cubin { major, minor },
            ) {
                Ok(toolchain::nvrtc::Compiled::Cubin(c)) => c,
                other => panic!("{name}: {other:?}"),
            }
        }
    };
    let m = ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
        .expect("the CUBIN loads");
    (ctx.clone(), m)
}

/// Runs `kernel(inputs..., out)` with `threads` threads on the GPU; returns `out` as bits.
fn gpu(
    m: &(Arc<CudaContext>, Arc<CudaModule>),
    kernel: &str,
    inputs: &[Vec<f32>],
    out: usize,
    threads: u32,
) -> Vec<u32> {
    let f = m.1.load_function(kernel).expect("the entry exists");
    let stream = m.0.default_stream();
    let bufs: Vec<_> = inputs
        .iter()
        .map(|d| stream.clone_htod(d).expect("upload"))
        .collect();
    let o = stream.clone_htod(&vec![f32::NAN; out]).expect("output");
    let mut b = stream.launch_builder(&f);
    for buf in &bufs {
        b.arg(buf);
    }
    b.arg(&o);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: every fixture entry takes `inputs.len()` device pointers and one output pointer,
    // each buffer as long as the kernel indexes (the tests size them from the fixtures' shapes).
    unsafe { b.launch(cfg) }.expect("launch");
    stream.synchronize().expect("the kernel runs");
    stream
        .clone_dtoh(&o)
        .expect("download")
        .iter()
        .map(|x| x.to_bits())
        .collect()
}

fn require_gpu() -> Arc<CudaContext> {
    assert!(
        gpu::probe().is_some(),
        "this test needs a CUDA GPU, and none was found"
    );
    CudaContext::new(0).expect("a context")
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn mma_sync_matches_the_device_on_random_fragments() {
    let ctx = require_gpu();
    let m = module(&ctx, "mma_sync");
    let mut r = Rng::new(2511);
    // (kernel, bits of precision, exponent range, k)
    let kinds = [
        ("mma_tf32", 24, 30, 8),
        ("mma_f16", 11, 3, 16),
        ("mma_bf16", 8, 30, 16),
    ];
    let mut beyond = 0;
    for (kernel, p, span, k) in kinds {
        let mut t = Tally::default();
        for trial in 0..300 {
            // Narrow exponents, wide ones, and accumulators that cancel most of the sum.
            let (lo, hi) = if trial % 3 == 0 {
                (-2, 0)
            } else {
                (-span, span.min(4))
            };
            let a: Vec<f64> = (0..16 * k).map(|_| val(&mut r, p, lo, hi)).collect();
            let b: Vec<f64> = (0..8 * k).map(|_| val(&mut r, p, lo, hi)).collect();
            let dot =
                |row: usize, n: usize| (0..k).map(|j| a[row * k + j] * b[j * 8 + n]).sum::<f64>();
            let c: Vec<f32> = (0..128)
                .map(|i| {
                    if trial % 3 == 2 {
                        -dot(i / 8, i % 8) as f32
                    } else {
                        val(&mut r, 24, lo, hi) as f32
                    }
                })
                .collect();
            let (aw, bw): (Vec<f32>, Vec<f32>) = if p == 24 {
                (
                    a.iter().map(|&x| x as f32).collect(),
                    b.iter().map(|&x| x as f32).collect(),
                )
            } else {
                let h = |x: f64| half_bits(p, x);
                let aw = (0..128)
                    .map(|i| f32::from_bits(h(a[2 * i]) | h(a[2 * i + 1]) << 16))
                    .collect();
                let bw = (0..64)
                    .map(|i| {
                        let (n, j) = (i / 8, i % 8);
                        f32::from_bits(h(b[2 * j * 8 + n]) | h(b[(2 * j + 1) * 8 + n]) << 16)
                    })
                    .collect();
                (aw, bw)
            };
            let inputs = [aw, bw, c.clone()];
            let (dev, sm) = (
                gpu(&m, kernel, &inputs, 128, 32),
                sim("mma_sync", kernel, &inputs, 128, 32),
            );
            for i in 0..128 {
                let (row, n) = (i / 8, i % 8);
                let arow = &a[row * k..row * k + k];
                let bcol: Vec<f64> = (0..k).map(|j| b[j * 8 + n]).collect();
                let context = || format!("D[{row}][{n}], a {arow:?}, b {bcol:?}, c {:e}", c[i]);
                t.add(
                    kernel,
                    dev[i],
                    sm[i],
                    tolerance(arow, &bcol, f64::from(c[i])),
                    &context,
                );
            }
        }
        t.report(&format!("mma.sync {kernel} on the device vs the simulator"));
        beyond += t.beyond;
    }
    assert_eq!(beyond, 0, "elements beyond tf32 tolerance");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn wmma_fragments_and_results_match_the_device() {
    let ctx = require_gpu();
    let m = module(&ctx, "wmma");
    let idx: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let idx16: Vec<f32> = (0..128)
        .map(|i| f32::from_bits(f16_bits(2.0 * i as f64) | f16_bits(2.0 * i as f64 + 1.0) << 16))
        .collect();
    let inputs = [idx, idx16];
    let (dev, sm) = (
        gpu(&m, "wmma_fragments", &inputs, 5120, 32),
        sim("wmma", "wmma_fragments", &inputs, 5120, 32),
    );
    if let Ok(dir) = std::env::var("MMA_REPORT") {
        let text: Vec<String> = dev.chunks(16).map(|c| format!("{c:?}")).collect();
        std::fs::write(format!("{dir}/wmma_fragments.gpu.txt"), text.join("\n")).expect("report");
    }
    let differ = (0..5120).filter(|&i| dev[i] != sm[i]).count();
    println!("wmma fragment mapping: {differ} of 5120 fragment words differ from the device");
    let mut r = Rng::new(1516);
    let mut beyond = 0;
    for kernel in [
        "wmma_tf32_row",
        "wmma_tf32_col",
        "wmma_f16_row",
        "wmma_f16_col",
        "wmma_bf16_row",
    ] {
        let mut t = Tally::default();
        for _ in 0..100 {
            let (p, span) = match kernel {
                k if k.contains("tf32") => (24, 20),
                k if k.contains("bf16") => (8, 20),
                _ => (11, 3),
            };
            let word = |r: &mut Rng| {
                if p == 24 {
                    val(r, 24, -span, span) as f32
                } else {
                    let h = |x: f64| half_bits(p, x);
                    f32::from_bits(
                        h(val(r, p, -span, span.min(3))) | h(val(r, p, -span, span.min(3))) << 16,
                    )
                }
            };
            let inputs: Vec<Vec<f32>> = (0..3)
                .map(|i| {
                    (0..256)
                        .map(|_| {
                            if i == 2 {
                                val(&mut r, 24, -4, 4) as f32
                            } else {
                                word(&mut r)
                            }
                        })
                        .collect()
                })
                .collect();
            let (dev, sm) = (
                gpu(&m, kernel, &inputs, 256, 32),
                sim("wmma", kernel, &inputs, 256, 32),
            );
            // Tolerance from the output's own scale: these operands are within 2^±20.
            for i in 0..256 {
                let scale = f64::from(f32::from_bits(dev[i])).abs().max(1.0) * 2f64.powi(-10);
                t.add(kernel, dev[i], sm[i], scale, &|| format!("element {i}"));
            }
        }
        t.report(&format!("wmma {kernel} on the device vs the simulator"));
        beyond += t.beyond;
    }
    assert_eq!(
        differ, 0,
        "the device's fragments differ: see MMA_REPORT's dump"
    );
    assert_eq!(beyond, 0, "elements beyond tf32 tolerance");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn ldmatrix_and_half_arithmetic_match_the_device_bit_for_bit() {
    let ctx = require_gpu();
    let mut r = Rng::new(1517);
    let tile: Vec<f32> = (0..128)
        .map(|_| f32::from_bits(r.next_u64() as u32 & !(1 << 30)))
        .collect();
    let lm = module(&ctx, "ldmatrix");
    let inputs = [tile];
    let (dev, sm) = (
        gpu(&lm, "ldmatrix", &inputs, 352, 32),
        sim("ldmatrix", "ldmatrix", &inputs, 352, 32),
    );
    let ld_same = dev.iter().zip(&sm).filter(|(a, b)| a == b).count();
    println!("ldmatrix x1/x2/x4/.trans: {ld_same}/352 words bit-identical");
    let hm = module(&ctx, "half2_ops");
    let (mut same, mut all) = (0, 0);
    for _ in 0..500 {
        let mut words: Vec<f32> = (0..6)
            .map(|i| {
                let h = |x: f64| {
                    if i < 3 {
                        f16_bits(x)
                    } else {
                        (x as f32).to_bits() >> 16
                    }
                };
                let (p, e) = if i < 3 { (11, 6) } else { (8, 30) };
                f32::from_bits(h(val(&mut r, p, -e, e)) | h(val(&mut r, p, -e, e)) << 16)
            })
            .collect();
        words.push(val(&mut r, 24, -20, 20) as f32);
        words.push(val(&mut r, 24, -20, 20) as f32);
        let inputs = [words];
        let (dev, sm) = (
            gpu(&hm, "half2_ops", &inputs, 12, 1),
            sim("half2_ops", "half2_ops", &inputs, 12, 1),
        );
        for i in 0..12 {
            all += 1;
            if dev[i] == sm[i] {
                same += 1;
            } else {
                let bits: Vec<u32> = inputs[0].iter().map(|f| f.to_bits()).collect();
                log(
                    "mismatches.txt",
                    &format!(
                        "half2_ops out[{i}]: device {:#010x}, sim {:#010x}, in {bits:x?}",
                        dev[i], sm[i]
                    ),
                );
            }
        }
    }
    println!("half2_ops: {same}/{all} words bit-identical");
    assert_eq!((ld_same, same), (352, all));
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn wgmma_matches_the_device_on_random_operands() {
    let ctx = require_gpu();
    let m = module(&ctx, "wgmma");
    let mut r = Rng::new(9090);
    let mut beyond = 0;
    let mut all = Tally::default();
    for name in tensor::wgmma::kernels() {
        let n = tensor::wgmma::form(&name).n;
        let mut t = Tally::default();
        for trial in 0..12 {
            // Wide operands, then the same with C cancelling most of the sum, then scale-d 0.
            let (mut inputs, want, mag) = tensor::wgmma::case(&name, &mut r, false, trial % 3 != 2);
            if trial % 3 == 1 {
                for (i, c) in inputs[2].iter_mut().enumerate() {
                    *c = -(want[i] - f64::from(*c)) as f32;
                }
            }
            let out = 64 * n;
            let (dev, sm) = (
                gpu(&m, &name, &inputs, out, 128),
                sim("wgmma", &name, &inputs, out, 128),
            );
            for i in 0..out {
                let context = || format!("D[{}][{}], trial {trial}", i / n, i % n);
                let tol = mag[i] * 2f64.powi(-9);
                t.add(&name, dev[i], sm[i], tol, &context);
                all.add(&name, dev[i], sm[i], tol, &context);
            }
        }
        t.report(&format!("wgmma {name} on the device vs the simulator"));
        beyond += t.beyond;
    }
    all.report("wgmma, every form, on the device vs the simulator");
    assert_eq!(beyond, 0, "elements beyond tf32 tolerance");
}

#[test]
#[ignore = "needs a CUDA GPU: run with --ignored on a GPU machine"]
fn wgmma_read_before_wait_on_the_device() {
    // Not a check: what the device gives for D stored between commit_group and wait_group
    // (undefined in the PTX ISA; the simulator gives the old accumulators).
    let ctx = require_gpu();
    let m = module(&ctx, "wgmma");
    let name = "wg_tf32_n8_b128_nowait";
    let mut r = Rng::new(9091);
    let (inputs, want, _) = tensor::wgmma::case(name, &mut r, true, true);
    let dev = gpu(&m, name, &inputs, 512, 128);
    let old = (0..512)
        .filter(|&i| dev[i] == inputs[2][i].to_bits())
        .count();
    let done = (0..512)
        .filter(|&i| f32::from_bits(dev[i]) == want[i] as f32)
        .count();
    println!(
        "wgmma D read before wait_group on the device: {old}/512 old accumulators, {done}/512 final results"
    );
}
