//! `.pragma "used_bytes_mask M"`: NVRTC widens a load whose last elements are never used to a
//! vector load and marks the bytes it uses (`4095` = the first 12 bytes of an `ld.v4.f32`). On the
//! GPU the unused elements are not read, so the simulator must not check them: no
//! `out_of_bounds` past the end of the array, no `uninitialized_read`, no read counted against
//! the budget; and the pragma covers only the load right after it. Hand-written PTX, one warp of
//! two threads; thread 0 fills the shared array `s` (or `out` comes from `in`).

use spec::Kind;
use spec::job::{Arg, Budget, Job, Launch};

/// A kernel whose two threads read `s[0..4)` with one `ld.shared.v4.f32` (after `pragma`, if
/// any) and write the sum of the first three to `out[tid]` and the fourth register to
/// `out[2 + tid]`; `s` has `floats` elements, of which thread 0 wrote `written`.
fn shared(floats: u32, written: u32, pragma: &str, second: bool) -> spec::RunOutput {
    let mut fill = String::new();
    for i in 0..written {
        fill += &format!(
            "mov.f32 %f9, 0f{:08X};\nst.shared.f32 [s+{}], %f9;\n",
            ((i + 1) as f32).to_bits(),
            4 * i
        );
    }
    // A second, unmarked load of the same four elements: the pragma does not reach it.
    let again = if second {
        "ld.shared.v4.f32 {%f5, %f6, %f7, %f8}, [s];\n"
    } else {
        ""
    };
    let ptx = format!(
        ".version 8.0\n.target sm_75\n.address_size 64\n\
         .visible .entry k(.param .u64 k_out)\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\n\
         .reg .b64 %rd<4>;\n.reg .f32 %f<10>;\n.shared .align 16 .b8 s[{bytes}];\n\
         ld.param.u64 %rd1, [k_out];\ncvta.to.global.u64 %rd1, %rd1;\nmov.u32 %r1, %tid.x;\n\
         setp.ne.s32 %p1, %r1, 0;\n@%p1 bra $L_wait;\n{fill}$L_wait:\nbar.sync 0;\n\
         mov.f32 %f4, 0f40E00000;\n{pragma}\nld.shared.v4.f32 {{%f1, %f2, %f3, %f4}}, [s];\n{again}\
         add.f32 %f1, %f1, %f2;\nadd.f32 %f1, %f1, %f3;\nmul.wide.u32 %rd2, %r1, 4;\n\
         add.s64 %rd3, %rd1, %rd2;\nst.global.f32 [%rd3], %f1;\nst.global.f32 [%rd3+8], %f4;\n\
         ret;\n}}\n",
        bytes = 4 * floats
    );
    let job = Job {
        kernel: "k".into(),
        launch: Launch::linear(1, 2),
        args: vec![Arg::Output {
            name: "out".into(),
            len: 4,
        }],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    };
    sim::run(&ptx, &job)
}

const MASK_12: &str = ".pragma \"used_bytes_mask 4095\";";

#[test]
fn a_masked_lane_past_the_end_of_the_array_is_no_access() {
    let out = shared(3, 3, MASK_12, false);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    // 1 + 2 + 3, and the fourth register keeps the 7 it held before the load.
    assert_eq!(out.outputs[0], [6.0, 6.0, 7.0, 7.0]);
    // The mask in hex says the same.
    let hex = shared(3, 3, ".pragma \"used_bytes_mask 0xfff\";", false);
    assert!(hex.diagnostics.is_empty(), "{:#?}", hex.diagnostics);
}

#[test]
fn without_the_pragma_the_fourth_lane_is_out_of_bounds() {
    let d = shared(3, 3, "", false).diagnostics;
    assert!(
        d[0].kind == Kind::OutOfBounds && d[0].message.contains("reads `s[3]`"),
        "{d:#?}"
    );
}

#[test]
fn a_masked_lane_nobody_wrote_is_not_an_uninitialized_read() {
    let out = shared(4, 3, MASK_12, false);
    assert!(out.diagnostics.is_empty(), "{:#?}", out.diagnostics);
    let d = shared(4, 3, "", false).diagnostics;
    assert!(
        d.iter().any(|x| x.kind == Kind::UninitializedRead),
        "{d:#?}"
    );
}

#[test]
fn the_pragma_covers_only_the_next_load() {
    let d = shared(3, 3, MASK_12, true).diagnostics;
    assert!(
        d[0].kind == Kind::OutOfBounds && d[0].message.contains("reads `s[3]`"),
        "{d:#?}"
    );
}

/// One thread copies `in[0..3)` to `out` through an `ld.global.v4.f32` marked to use 12 bytes,
/// under a budget of `reads` global reads.
fn global(pragma: &str, reads: u32) -> Vec<spec::Diagnostic> {
    let ptx = format!(
        ".version 8.0\n.target sm_75\n.address_size 64\n\
         .visible .entry k(.param .u64 k_in, .param .u64 k_out)\n{{\n.reg .b64 %rd<3>;\n\
         .reg .f32 %f<5>;\nld.param.u64 %rd1, [k_in];\nld.param.u64 %rd2, [k_out];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n{pragma}\n\
         ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd1];\nst.global.f32 [%rd2], %f1;\n\
         st.global.f32 [%rd2+4], %f2;\nst.global.f32 [%rd2+8], %f3;\nret;\n}}\n"
    );
    let job = Job {
        kernel: "k".into(),
        launch: Launch::linear(1, 1),
        args: vec![
            Arg::Input {
                name: "in".into(),
                data: vec![1.0, 2.0, 3.0],
            },
            Arg::Output {
                name: "out".into(),
                len: 3,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: Some(Budget {
            reads,
            writes: 3,
            ..Budget::NONE
        }),
        work: 1,
    };
    let out = sim::run(&ptx, &job);
    if out.diagnostics.is_empty() {
        assert_eq!(out.outputs[0], [1.0, 2.0, 3.0]);
    }
    out.diagnostics
}

#[test]
fn a_masked_global_lane_is_neither_bounds_checked_nor_counted() {
    let d = global(MASK_12, 3);
    assert!(d.is_empty(), "{d:#?}");
    let d = global("", 4);
    assert!(
        d[0].kind == Kind::OutOfBounds && d[0].message.contains("in[3]"),
        "{d:#?}"
    );
}
