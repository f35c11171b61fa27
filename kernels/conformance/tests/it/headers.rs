//! The standard headers a learner may include compile with NVRTC (installed as the runner
//! installs it, when this machine has none), and what they declare works in the simulator:
//! `<cstdio>`/`<stdio.h>` (`printf`), `<cmath>`/`<math.h>` (`std::sqrt`, `INFINITY`, `M_PI`),
//! `<cstdint>`/`<stdint.h>`, `<cassert>`/`<assert.h>`, CUDA's `<cuda_fp16.h>` and `<mma.h>` (from the
//! pinned `nvidia-cuda-runtime` and `nvidia-cuda-crt` wheels).

use crate::common;

use spec::job::{Arg, Job, Launch};

fn ptx(code: &str) -> String {
    common::compile(code, "kernel.cu")
}

/// Runs `k(const float* in, float* out)` on one thread with `in = [x]` and returns `out[0]`.
fn run(code: &str, x: f32) -> (f32, Vec<String>) {
    let job = Job {
        kernel: "k".into(),
        launch: Launch::linear(1, 1),
        args: vec![
            Arg::Input {
                name: "in".into(),
                data: vec![x],
            },
            Arg::Output {
                name: "out".into(),
                len: 1,
            },
        ],
        constants: vec![],
        tensor_maps: vec![],
        budget: None,
        work: 1,
    };
    let out = sim::run(&ptx(code), &job);
    assert!(out.diagnostics.is_empty(), "{code}\n{:#?}", out.diagnostics);
    let printed = out.printed.iter().map(|p| p.text.clone()).collect();
    (out.outputs[0][0], printed)
}

#[test]
fn cstdio_and_stdio_h_give_printf() {
    for header in ["cstdio", "stdio.h"] {
        let call = if header == "cstdio" {
            "std::printf"
        } else {
            "printf"
        };
        let code = format!(
            "#include <{header}>\nextern \"C\" __global__ void k(const float* in, float* out) {{ {call}(\"x=%.1f\\n\", in[0]); out[0] = in[0]; }}"
        );
        assert_eq!(run(&code, 2.5).1, vec!["x=2.5\n"], "{header}");
    }
}

#[test]
fn cmath_and_math_h_give_the_functions_and_constants() {
    for (header, call) in [("cmath", "std::sqrt"), ("math.h", "sqrt")] {
        let code = format!(
            "#include <{header}>\nextern \"C\" __global__ void k(const float* in, float* out) {{ out[0] = {call}(in[0]) + (isinf(INFINITY) ? (float)M_PI : 0.0f); }}"
        );
        let want = 2.0f32 + std::f32::consts::PI;
        assert_eq!(run(&code, 4.0).0, want, "{header}");
    }
}

#[test]
fn cstdint_and_stdint_h_give_the_fixed_width_types() {
    for (header, ty) in [("cstdint", "std::int64_t"), ("stdint.h", "uint8_t")] {
        let code = format!(
            "#include <{header}>\nextern \"C\" __global__ void k(const float* in, float* out) {{ {ty} v = ({ty})in[0]; out[0] = (float)(v + (INT32_MAX > 0)) + (float)sizeof({ty}); }}"
        );
        let bytes = if ty == "uint8_t" { 1.0 } else { 8.0 };
        assert_eq!(run(&code, 7.0).0, 8.0 + bytes, "{header}");
    }
}

#[test]
fn cassert_and_assert_h_give_assert() {
    for header in ["cassert", "assert.h"] {
        let code = format!(
            "#include <{header}>\nextern \"C\" __global__ void k(const float* in, float* out) {{ assert(in[0] > 0.0f); out[0] = in[0]; }}"
        );
        assert_eq!(run(&code, 1.0).0, 1.0, "{header}");
    }
}

#[test]
fn cuda_fp16_h_comes_from_the_pinned_runtime_wheel() {
    let code = "#include <cuda_fp16.h>\nextern \"C\" __global__ void k(const float* in, float* out) { __half h = __float2half(in[0]); out[0] = __half2float(h) * 2.0f; }";
    assert_eq!(run(code, 1.5).0, 3.0);
}

#[test]
fn mma_h_compiles_with_the_crt_headers_it_fronts() {
    // `mma.h` only includes `crt/mma.h`, which comes from the pinned `nvidia-cuda-crt` wheel.
    let code = "#include <mma.h>\nusing namespace nvcuda;\nextern \"C\" __global__ void k(const float* in, float* out) {\n    wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;\n    wmma::fill_fragment(c, in[0]);\n    wmma::store_matrix_sync(out, c, 16, wmma::mem_row_major);\n}\n";
    let ptx = ptx(code);
    assert!(ptx.contains("wmma.store"), "{ptx}");
}
