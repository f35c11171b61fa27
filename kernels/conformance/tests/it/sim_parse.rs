//! Hand-written PTX for the syntax NVRTC emits less often: inline-asm scopes with their own
//! `.reg`, `.loc` with `inlined_at`, `.const` and `.global` initializers, `0d` doubles,
//! `[reg+-imm]` addresses, vector `mov` packing, `.pred` logic and `selp`.

use spec::job::{Arg, Job, Launch};

const PTX: &str = r#"
.version 8.0
.target sm_75
.address_size 64
.const .align 4 .f32 c_tab[3] = {0f3F800000, 0f40000000, 0f40400000};
.global .align 4 .u32 g_init[2] = {7, 9};
.visible .entry k(
	.param .u64 k_param_0,
	.param .u64 k_param_1
)
.maxntid 32, 1, 1
{
	.reg .pred %p<3>;
	.reg .b32 %r<8>;
	.reg .f32 %f<6>;
	.reg .b64 %rd<6>;
	.reg .f64 %fd<3>;
	.loc 1 12 5, function_name $L__info_string0, inlined_at 1 30 3
	ld.param.u64 %rd1, [k_param_1];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u64 %rd3, c_tab;
	ld.const.f32 %f1, [%rd3+8];
	ld.const.f32 %f2, [c_tab+4];
	{
	.reg .b32 %r1;
	mov.b32 %r1, 5;
	add.s32 %r2, %r1, 1;
	}
	mov.f64 %fd1, 0d4000000000000000;
	cvt.rn.f32.f64 %f3, %fd1;
	mov.u64 %rd4, g_init;
	ld.global.u32 %r3, [%rd4+4];
	add.s64 %rd5, %rd2, 8;
	st.global.f32 [%rd5+-8], %f1;
	st.global.f32 [%rd5+-4], %f2;
	cvt.rn.f32.s32 %f4, %r2;
	st.global.f32 [%rd5], %f4;
	st.global.f32 [%rd5+4], %f3;
	setp.eq.s32 %p1, %r1, 0;
	setp.ne.s32 %p2, %r3, 9;
	or.pred %p1, %p1, %p2;
	selp.f32 %f5, 0f3F800000, 0fBF800000, %p1;
	@!%p1 bra $L__end;
	st.global.f32 [%rd5+8], %f5;
	mov.b64 %rd3, {%r2, %r3};
	cvt.rn.f32.u64 %f5, %rd3;
	st.global.f32 [%rd5+12], %f5;
$L__end:
	ret;
}
.file 1 "kernel.cu"
"#;

#[test]
fn hand_written_ptx_features() {
    let job = Job {
        kernel: "k".into(),
        // One thread: every thread stores to out[0..4], so two would race.
        launch: Launch::linear(1, 1),
        args: vec![
            Arg::Input {
                name: "a".into(),
                data: vec![0.0],
            },
            Arg::Output {
                name: "out".into(),
                len: 6,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    };
    let out = sim::run(PTX, &job);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let o = &out.outputs[0];
    // c_tab[2], c_tab[1], the inner scope's 5 + 1, the double 2.0, thread 0's selp, then
    // {6, 9} packed into a 64-bit value.
    assert_eq!(&o[..5], &[3.0, 2.0, 6.0, 2.0, 1.0]);
    assert_eq!(o[5], ((9u64 << 32) | 6) as f32);
}

#[test]
fn loc_line_is_the_learners_line_not_the_inlined_one() {
    let bad = PTX.replace(
        "st.global.f32 [%rd5+-8], %f1;",
        "st.global.f32 [%rd5+-800], %f1;",
    );
    let job = Job {
        kernel: "k".into(),
        launch: Launch::linear(1, 1),
        args: vec![
            Arg::Input {
                name: "a".into(),
                data: vec![0.0],
            },
            Arg::Output {
                name: "out".into(),
                len: 6,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    };
    let d = &sim::run(&bad, &job).diagnostics[0];
    assert_eq!(d.kind, spec::Kind::OutOfBounds);
    assert_eq!((d.file.as_deref(), d.line), (Some("kernel.cu"), Some(12)));
    assert!(d.message.contains("`out[-198]`"), "{}", d.message);
}
