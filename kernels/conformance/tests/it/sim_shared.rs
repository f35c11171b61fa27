//! The checks of shared memory that go beyond the block's window and `__syncthreads()`: bounds
//! per `__shared__` array (an index past one array that lands in the next is `out_of_bounds`,
//! naming the array) and `__syncwarp()` as the boundary of the race check among the threads of
//! one warp. Broken fixtures carry their `// expect: KIND` mark; the `_ok` fixtures are correct
//! kernels that must stay free of diagnostics. PTX from `fixtures/gen.py`.

use crate::common;

use common::broken::*;
use spec::Kind;

#[test]
fn p02_reading_sa_past_tpb_into_sb_is_out_of_bounds() {
    let d = check("p02_sa_past_tpb", &P02);
    assert!(
        d[0].message.contains("reads `sa[64]`")
            && d[0]
                .message
                .contains("shared array `sa` has only 64 elements"),
        "{}",
        d[0].message
    );
}

#[test]
fn p03_writing_tile_past_its_end_into_sb_is_out_of_bounds() {
    let d = check("p03_tile_past_end", &P03);
    assert!(
        d[0].message.contains("writes `tile[40]`")
            && d[0].message.contains("`tile` has only 40 elements"),
        "{}",
        d[0].message
    );
    assert_eq!(
        (d[0].block, d[0].thread),
        (Some([0, 0, 0]), Some([8, 0, 0]))
    );
}

#[test]
fn p02_pointers_into_two_shared_arrays_are_clean() {
    clean("p02_pointers_ok", &P02);
}

#[test]
fn p03_warp_synchronous_code_with_syncwarp_is_clean() {
    clean("p03_syncwarp_ok", &P03);
}

#[test]
fn p03_halo_loaded_after_the_syncwarp_is_a_shared_race() {
    let d = check("p03_syncwarp_early", &P03);
    assert!(has(&d, Kind::Race, &["reads `tile[3"]), "{d:#?}");
    assert!(d.iter().all(|x| x.kind == Kind::Race), "{d:#?}");
}

#[test]
fn p03_reusing_the_tile_without_a_syncwarp_is_a_shared_race() {
    let d = check("p03_syncwarp_reuse", &P03);
    assert!(
        has(&d, Kind::Race, &["writes `tile[", "after thread"]),
        "{d:#?}"
    );
}

/// The job of a hand-written kernel `k`.
fn hand_job(launch: spec::job::Launch, args: Vec<spec::job::Arg>) -> spec::job::Job {
    spec::job::Job {
        kernel: "k".into(),
        launch,
        args,
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    }
}

/// A hand-written kernel: a static array `sa` of 4 floats, then the dynamic array `dyn` of
/// 16 dynamic bytes; thread 0 reads `dyn` at float index `%r3` (given by `idx` through
/// `dyn`'s address; with `mix`, `sa`'s address is added in, so the base derives from both).
fn run_dyn(idx: u32, mix: bool) -> Vec<spec::Diagnostic> {
    let base = if mix { "add.s32 %r2, %r2, %r1;" } else { "" };
    let ptx = format!(
        ".version 8.0\n.target sm_75\n.address_size 64\n.extern .shared .align 16 .b8 dyn[];\n\
         .visible .entry k()\n{{\n.reg .b32 %r<5>;\n.reg .f32 %f<2>;\n\
         .shared .align 4 .b8 sa[16];\nmov.u32 %r1, sa;\nmov.u32 %r2, dyn;\n{base}\n\
         mov.u32 %r3, {};\nadd.s32 %r4, %r2, %r3;\nld.shared.f32 %f1, [%r4];\nret;\n}}\n",
        idx * 4
    );
    let mut launch = spec::job::Launch::linear(1, 1);
    launch.shared_bytes = 16;
    let job = hand_job(launch, vec![]);
    // Checks off: nobody wrote `dyn`, and only the bounds are under test here.
    let opts = sim::SimOptions {
        checks: false,
        ..Default::default()
    };
    sim::run_with(&ptx, &job, &opts).diagnostics
}

#[test]
fn the_dynamic_array_has_the_launch_size_and_ambiguous_bases_get_the_window_check() {
    assert!(run_dyn(3, false).is_empty());
    let d = run_dyn(4, false);
    assert!(
        d[0].kind == Kind::OutOfBounds
            && d[0].message.contains("reads `dyn[4]`")
            && d[0].message.contains("`dyn` has only 4 elements"),
        "{d:#?}"
    );
    // `dyn + sa`: derived from two arrays, so only the block's 32 bytes bound it.
    assert!(run_dyn(3, true).is_empty());
    let d = run_dyn(4, true);
    assert!(d[0].message.contains("shared memory at byte 32"), "{d:#?}");
}

#[test]
fn p03_staging_with_cp_async_is_clean() {
    clean("p03_cp_async_ok", &P03);
}

#[test]
fn p03_cp_async_without_a_wait_races_with_the_copy() {
    let d = check("p03_cp_async_no_wait", &P03);
    assert!(
        has(
            &d,
            Kind::Race,
            &[
                "reads `",
                "while the `cp.async` copy that thread",
                "may still be writing it",
                "lands at any moment between its issue and the `cp.async.wait_group`"
            ]
        ),
        "{d:#?}"
    );
}

#[test]
fn p03_cp_async_waited_for_but_without_a_barrier_is_a_race() {
    let d = check("p03_cp_async_no_barrier", &P03);
    assert!(
        has(&d, Kind::Race, &["reads `", "`cp.async` copy"]),
        "{d:#?}"
    );
    assert!(d.iter().all(|x| x.kind == Kind::Race), "{d:#?}");
}

/// The job of a one-thread kernel `k(a, out)`: `a` holds 1 to 8, `out` has `outputs` floats.
fn copy_job(outputs: usize) -> spec::job::Job {
    hand_job(
        spec::job::Launch::linear(1, 1),
        vec![
            spec::job::Arg::Input {
                name: "a".into(),
                data: (1..=8).map(|x| x as f32).collect(),
            },
            spec::job::Arg::Output {
                name: "out".into(),
                len: outputs,
            },
        ],
    )
}

/// A hand-written kernel of one thread: two groups of copies into `s`, the second with 8 of its
/// 16 source bytes (zeros after), a third copy with `ignore-src` set; reads after `wait_group 1`
/// and after `wait_all` go to `out`.
#[test]
fn cp_async_groups_land_at_their_wait_and_fill_zeros() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 k_a, .param .u64 k_out)\n{\n\
        .reg .pred %p<2>;\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n.reg .f32 %f<8>;\n\
        .shared .align 16 .b8 s[48];\n\
        ld.param.u64 %rd1, [k_a];\nld.param.u64 %rd2, [k_out];\nmov.u32 %r1, s;\n\
        cp.async.ca.shared.global.L2::128B [%r1], [%rd1], 16;\ncp.async.commit_group;\n\
        mov.u32 %r2, 8;\ncp.async.cg.shared.global [%r1+16], [%rd1+16], 16, %r2;\n\
        cp.async.commit_group;\ncp.async.wait_group 1;\n\
        ld.shared.f32 %f1, [%r1+4];\nld.shared.f32 %f2, [%r1+16];\n\
        setp.eq.u32 %p1, %r2, 8;\ncp.async.ca.shared.global [%r1+32], [%rd1], 4, %p1;\n\
        cp.async.wait_all;\n\
        ld.shared.f32 %f3, [%r1+20];\nld.shared.f32 %f4, [%r1+24];\nld.shared.f32 %f5, [%r1+32];\n\
        st.global.f32 [%rd2], %f1;\nst.global.f32 [%rd2+4], %f2;\nst.global.f32 [%rd2+8], %f3;\n\
        st.global.f32 [%rd2+12], %f4;\nst.global.f32 [%rd2+16], %f5;\nret;\n}\n";
    let job = copy_job(5);
    let out = sim::run(ptx, &job);
    // s[16] is read before its group is waited for: it still holds what it held before.
    assert_eq!(out.outputs[0], [2.0, 0.0, 6.0, 0.0, 0.0]);
    assert!(
        out.diagnostics.len() == 1 && out.diagnostics[0].kind == Kind::UninitializedRead,
        "{:#?}",
        out.diagnostics
    );
}

/// A hand-written kernel of one thread copying into the same shared words twice: with a wait
/// between the copies it is clean; with none (the first group left in flight by `wait_group 1`,
/// as fuzz seed 2,023,485's generated kernel did) the two copies are unordered, a race at both
/// lines, though the simulator lands them in order.
#[test]
fn a_threads_second_copy_into_bytes_its_first_may_still_write_is_a_race() {
    let kernel = |between: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 k_a, .param .u64 k_out)\n{{\n\
             .reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n.reg .f32 %f<2>;\n\
             .shared .align 16 .b8 s[16];\n\
             ld.param.u64 %rd1, [k_a];\nld.param.u64 %rd2, [k_out];\nmov.u32 %r1, s;\n\
             cp.async.ca.shared.global [%r1], [%rd1], 16;\ncp.async.commit_group;\n\
             cp.async.wait_group {between};\n\
             cp.async.ca.shared.global [%r1+4], [%rd1+16], 8;\ncp.async.commit_group;\n\
             cp.async.wait_all;\nbar.sync 0;\n\
             ld.shared.f32 %f1, [%r1+4];\nst.global.f32 [%rd2], %f1;\nret;\n}}\n"
        )
    };
    let job = copy_job(1);
    // Waited for: clean, and the second copy's value stays.
    let out = sim::run(&kernel("0"), &job);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    assert_eq!(out.outputs[0], [5.0]);
    // `wait_group 1` with one group committed leaves that group in flight.
    let out = sim::run(&kernel("1"), &job);
    assert!(
        has(
            &out.diagnostics,
            Kind::Race,
            &[
                "copies into",
                "while its own earlier copy there",
                "wait for the first copy"
            ]
        ),
        "{:#?}",
        out.diagnostics
    );
}

#[test]
fn the_bulk_copies_it_does_not_run_are_unsupported_by_name() {
    // (`sim_bulk` runs the one-dimensional global/shared forms.)
    for (inst, words) in [
        (
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r2], 16, [%r2];",
            "clusters are not simulated",
        ),
        (
            "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], 16;",
            "`cp.reduce.async.bulk` is not simulated",
        ),
    ] {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<3>;\n.reg .b64 %rd<2>;\n{inst}\nret;\n}}\n"
        );
        let job = hand_job(spec::job::Launch::linear(1, 1), vec![]);
        let d = sim::run(&ptx, &job).diagnostics;
        assert!(
            d[0].kind == Kind::UnsupportedInstruction && d[0].message.contains(words),
            "{inst}: {d:#?}"
        );
    }
}

/// The run of a kernel that fills `__shared__ __half h[64]` with `in` (two threads per 32-bit
/// word), then does `rest`.
fn halves(rest: &str) -> spec::job::RunOutput {
    common::run_small(&format!(
        "#include <cuda_fp16.h>\nextern \"C\" __global__ void k(const float* in, float* out, int n)\n{{\n    __shared__ __half h[64];\n    h[threadIdx.x] = __float2half(in[threadIdx.x]);\n{rest}}}\n"
    ))
}

/// Two threads each writing their own half of one 32-bit word (a `__half` array) are no race,
/// nor are four writing the bytes of one: the race check is per byte where an access covers
/// part of a word.
#[test]
fn two_threads_writing_the_halves_of_one_word_are_no_race() {
    let out = halves(
        r#"    __shared__ unsigned char c[64];
    c[threadIdx.x] = (unsigned char)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = __half2float(h[63 - threadIdx.x]) + c[threadIdx.x ^ 1];
"#,
    );
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    for t in 0..64usize {
        let want = (63 - t) as f32 * 0.5 - 7.0 + (t ^ 1) as f32;
        assert_eq!(out.outputs[0][t], want, "thread {t}");
    }
}

/// A race on one half of a word is still a race, at that half's element.
#[test]
fn two_threads_writing_the_same_half_are_a_race_at_that_element() {
    let out = halves(
        r#"    if (threadIdx.x == 9) {
        h[3] = __float2half(1.0f);
    }
    __syncthreads();
    out[threadIdx.x] = __half2float(h[threadIdx.x]);
"#,
    );
    let d = &out.diagnostics;
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].kind, Kind::Race, "{d:#?}");
    assert!(
        d[0].message.contains("`h[3]`") && !d[0].message.contains("more times"),
        "{}",
        d[0].message
    );
}
