//! The tensor cores' tf32 rate through Hopper's `wgmma`, the fastest path an sm_90 device has.
//!
//! `mma.sync` (measured in `bench.rs`) reaches about two thirds of what Hopper's tensor cores
//! do; `wgmma.mma_async` (sm_90a only) reaches the rest, and it is what puzzle 11's Hopper path
//! uses, so a tensor floor set by `mma.sync` alone is no floor there. `wgmma_peak` runs chains of
//! m64n256k8 tf32 products in every warpgroup (two a block, one block an SM: 128 accumulators a
//! thread leave room for no more), A from registers and B from an 8 KB shared tile, both all
//! 1.0, so every product adds exactly 8 to each accumulator: no global memory is touched inside
//! the loop, and a thread's sum (1,024 per product) counts the products that ran.

use toolchain::nvrtc::Source;

/// Products per warpgroup per trip of the loop, between one commit and its wait.
pub const STEPS: u32 = 16;

/// The kernel's source: the 128 accumulator operands of the wgmma are written out here.
pub fn source() -> String {
    let acc: Vec<String> = (0..128).map(|i| format!("%{i}")).collect();
    let outs: Vec<String> = (0..128).map(|i| format!("\"+f\"(acc[{i}])")).collect();
    format!(
        r#"
extern "C" __global__ void wgmma_peak(float* out, int iters)
{{
    __shared__ __align__(1024) unsigned tile[2048];
    const unsigned one = 0x3f800000u;
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) tile[i] = one;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    // No swizzle; leading byte offset 128, stride byte offset 256: the 32 row groups of eight
    // rows by two 16-byte K chunks span exactly the 8 KB tile (its contents are all 1.0).
    unsigned long long b = ((unsigned long long)((unsigned)__cvta_generic_to_shared(tile) & 0x3ffff) >> 4)
        | (8ull << 16) | (16ull << 32);
    float acc[128];
    for (int q = 0; q < 128; q++) acc[q] = 0.0f;
    for (int i = 0; i < iters; i++) {{
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        #pragma unroll
        for (int u = 0; u < {STEPS}; u++) {{
            asm volatile("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{{acc}}}, "
                         "{{%128, %128, %128, %128}}, %129, 1, 1, 1;"
                         : {outs}
                         : "r"(one), "l"(b));
        }}
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }}
    float s = 0.0f;
    for (int q = 0; q < 128; q++) s += acc[q];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}}
"#,
        acc = acc.join(", "),
        outs = outs.join(", ")
    )
}

/// The source as NVRTC takes it.
pub fn compiled(code: &str) -> Source<'_> {
    Source {
        code,
        file: "wgmma_peak.cu",
        macros: &[],
    }
}

/// Threads a block: two warpgroups.
pub const THREADS: u32 = 256;

/// Floating-point operations of one launch: 2 * 64 * 256 * 8 per product per warpgroup.
pub fn flops(iters: i32, threads: u32) -> f64 {
    262_144.0 * f64::from(STEPS) * f64::from(iters) * f64::from(threads / 128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolchain::nvrtc::{self, Compiled, Target};

    /// The FLOP count of `wgmma_peak` counts what it runs: each of a warpgroup's products adds 8
    /// to each of a thread's 128 accumulators, so a thread's sum is 1,024 a product.
    #[test]
    fn the_wgmma_peak_kernel_runs_the_products_its_flop_count_claims() {
        let location = nvrtc::locate()
            .or_else(|| nvrtc::install().ok().map(nvrtc::Location::Path))
            .expect("NVRTC found or installed");
        nvrtc::load(&location).expect("NVRTC loads");
        let code = source();
        let ptx = match nvrtc::compile(&compiled(&code), &Target::Ptx).expect("compiles") {
            Compiled::Ptx(p) => p,
            Compiled::Cubin(_) => unreachable!("asked for PTX"),
        };
        assert!(ptx.contains(".target sm_90a"), "compiled for sm_90a");
        let (threads, iters) = (THREADS, 2);
        let out = sim::run(
            &ptx,
            &crate::bench::peak_job("wgmma_peak", 1, threads, iters),
        );
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let products = STEPS * iters as u32;
        for (t, got) in out.outputs[0].iter().enumerate() {
            assert_eq!(*got, (1024 * products) as f32, "thread {t}");
        }
        assert_eq!(
            flops(iters, threads),
            2.0 * 2.0 * 64.0 * 256.0 * 8.0 * products as f64
        );
        let both = crate::bench::Peaks {
            fma_tflops: 60.0,
            copy_gbps: 3000.0,
            tf32_tflops: Some(330.0),
            wgmma_tf32_tflops: Some(450.0),
        };
        assert_eq!(both.tensor_tflops(), Some(450.0));
    }
}
