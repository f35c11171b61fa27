//! The checks of shared memory that go beyond the block's window and `__syncthreads()`: bounds
//! per `__shared__` array (an index past one array that lands in the next is `out_of_bounds`,
//! naming the array) and `__syncwarp()` as the boundary of the race check among the threads of
//! one warp. Broken fixtures carry their `// expect: KIND` mark; the `_ok` fixtures are correct
//! kernels that must stay free of diagnostics. PTX from `fixtures/gen.py`.

mod common;

use common::broken::*;
use kernels::Kind;

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

/// A hand-written kernel: a static array `sa` of 4 floats, then the dynamic array `dyn` of
/// 16 dynamic bytes; thread 0 reads `dyn` at float index `%r3` (given by `idx` through
/// `dyn`'s address; with `mix`, `sa`'s address is added in, so the base derives from both).
fn run_dyn(idx: u32, mix: bool) -> Vec<kernels::Diagnostic> {
    let base = if mix { "add.s32 %r2, %r2, %r1;" } else { "" };
    let ptx = format!(
        ".version 8.0\n.target sm_75\n.address_size 64\n.extern .shared .align 16 .b8 dyn[];\n\
         .visible .entry k()\n{{\n.reg .b32 %r<5>;\n.reg .f32 %f<2>;\n\
         .shared .align 4 .b8 sa[16];\nmov.u32 %r1, sa;\nmov.u32 %r2, dyn;\n{base}\n\
         mov.u32 %r3, {};\nadd.s32 %r4, %r2, %r3;\nld.shared.f32 %f1, [%r4];\nret;\n}}\n",
        idx * 4
    );
    let mut launch = kernels::job::Launch::linear(1, 1);
    launch.shared_bytes = 16;
    let job = kernels::job::Job {
        kernel: "k".into(),
        launch,
        args: vec![],
        constants: vec![],
        budget: None,
        work: 1,
    };
    // Checks off: nobody wrote `dyn`, and only the bounds are under test here.
    let opts = kernels::sim::SimOptions {
        checks: false,
        ..Default::default()
    };
    kernels::sim::run_with(&ptx, &job, &opts).diagnostics
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
