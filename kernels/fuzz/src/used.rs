//! Which of the families (`families`, `warp`) a generated kernel used, and the shared
//! declarations and helpers those need; `source` keeps one in its generator.

/// Which families a kernel used, for the declarations and helpers they need.
#[derive(Clone, Copy, Debug, Default)]
pub struct Used {
    pub cp_async: bool,
    pub ldmatrix: bool,
    pub mma: bool,
    pub wmma: bool,
}

impl Used {
    /// Shared arrays and helpers, at the top of the kernel's file and body.
    pub fn helpers(&self) -> &'static str {
        if self.mma || self.wmma {
            "// Tensor-core operands: finite, 1e-3 < |x| < 1e4, else 0.5 (no NaN, inf or subnormal).\n\
             __device__ float fz(float x) { return (fabsf(x) > 1e-3f && fabsf(x) < 1e4f) ? x : 0.5f; }\n\
             __device__ unsigned h2(float a, float b) { return (unsigned)__half_as_ushort(__float2half_rn(fz(a))) | ((unsigned)__half_as_ushort(__float2half_rn(fz(b))) << 16); }\n"
        } else {
            ""
        }
    }

    pub fn declarations(&self) -> String {
        let mut d = String::new();
        if self.cp_async {
            d += "    __shared__ __align__(16) unsigned sh_c[3][512];\n";
        }
        if self.ldmatrix {
            d += "    __shared__ __align__(16) unsigned sh_m[512];\n";
        }
        if self.wmma {
            d += "    __shared__ __align__(32) __half sh_h[2][256];\n";
            d += "    __shared__ __align__(32) float sh_t[2][128];\n";
            d += "    __shared__ __align__(32) float sh_w[4][256];\n";
        }
        d
    }
}
