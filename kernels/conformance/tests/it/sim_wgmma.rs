//! Hopper's `wgmma.mma_async` on the simulator, from the `wgmma` fixture (compute_90a): every
//! form it runs (tf32, f16, bf16; N from 8 to 256; A from shared memory under each swizzle mode
//! and from registers; scale-d 0 and 1; imm-scale-a -1) against a reference computed here, on
//! operands whose sums are exact in f32, and the asynchrony: D read before `wgmma.wait_group`
//! holds the old accumulators.

use crate::tensor;

use spec::Rng;
use tensor::sim;
use tensor::wgmma::{case, form, kernels};

#[test]
fn every_form_gives_exact_sums_exactly() {
    let names = kernels();
    assert!(names.len() >= 20, "{names:?}");
    let mut r = Rng::new(90);
    for name in &names {
        for scale_d in [true, false] {
            let (inputs, want, _) = case(name, &mut r, true, scale_d);
            let got = sim("wgmma", name, &inputs, want.len(), 128);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    f32::from_bits(*g),
                    *w as f32,
                    "{name} scale-d {scale_d}: D[{}][{}]",
                    i / form(name).n,
                    i % form(name).n
                );
            }
        }
    }
}

#[test]
fn wide_operands_are_within_tf32_tolerance() {
    // tf32 words keep 10 of their 23 fraction bits, the sums 25 bits: within 2^-9 of the
    // magnitudes (f16 and bf16 operands are exact, the sums within 2^-20).
    let mut r = Rng::new(91);
    for name in kernels() {
        let (inputs, want, mag) = case(&name, &mut r, false, true);
        let got = sim("wgmma", &name, &inputs, want.len(), 128);
        for (i, g) in got.iter().enumerate() {
            let g = f64::from(f32::from_bits(*g));
            assert!(
                (g - want[i]).abs()
                    <= mag[i] * 2f64.powi(if name.contains("tf32") { -9 } else { -20 }),
                "{name}: D element {i}: {g} vs {}",
                want[i]
            );
        }
    }
}

#[test]
fn reading_d_before_wait_group_waits_as_ptxas_makes_it() {
    // The kernel stores D between commit_group and wait_group; ptxas puts a wait for the
    // warpgroup's wgmma's before the stores (WARPGROUP.DEPBAR in the H100's SASS), and the
    // device gives the final result (gpu_mma's `wgmma_read_before_wait_on_the_device`).
    let name = "wg_tf32_n8_b128_nowait";
    let mut r = Rng::new(92);
    let (inputs, want, _) = case(name, &mut r, true, true);
    let got = sim("wgmma", name, &inputs, want.len(), 128);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(f32::from_bits(*g), *w as f32);
    }
}

#[test]
fn overwriting_the_tile_before_wait_group_is_caught() {
    // Shared memory is read when the group retires: zeros written into B's tile before the
    // wait reach the product, and the writes race with the wgmma's reads.
    let name = "wg_tf32_n8_b128_clobber";
    let mut r = Rng::new(93);
    let (inputs, want, _) = case(name, &mut r, true, true);
    let o = sim::run(
        &tensor::ptx("wgmma"),
        &tensor::job(name, &inputs, want.len(), 128),
    );
    let wrong = o.outputs[0].iter().zip(&want).any(|(g, w)| *g != *w as f32);
    let race = o
        .diagnostics
        .iter()
        .any(|d| d.kind == spec::diag::Kind::Race);
    assert!(wrong && race, "{:#?}", o.diagnostics);
}
