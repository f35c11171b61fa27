#!/usr/bin/env python3
"""Writes an experiment beside the solution: solutions/puzzle-12.cu with its two products with a
remainder (hi * lo and lo * hi, 2^-11 of the result) done by one mma.sync m16n8k16 in bf16 instead of
two m16n8k8 in tf32: k = 16 holds [hi(w) | lo(w)] against [lo(x) | hi(x)]. bf16 keeps 8 bits, enough
for terms that small; bf16 mma.sync runs at twice tf32's rate (mma_rate.cu), so a k-step costs two
tensor-pipe slots instead of three. Usage: bf16_cross.py SOLUTION OUT (each edit must apply once)."""
import sys

src = open(sys.argv[1]).read()


def edit(old, new):
    global src
    assert src.count(old) == 1, f"not once: {old!r}"
    src = src.replace(old, new)


edit("// ANCHOR_END: split\n", """// ANCHOR_END: split

// Two floats as a bf16 pair, v0 in the low half (the lower k of the fragment).
__device__ __forceinline__ float bf16x2(float v0, float v1)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(v1), "f"(v0));
    return __uint_as_float(r);
}

// Inputs: {hi0, hi1, bf16(lo0, lo1), bf16(hi0, hi1)}; taps: {hi0, hi1, bf16(hi0, hi1), bf16(lo0, lo1)}.
__device__ __forceinline__ float4 split_x(float x0, float x1)
{
    float h0 = tf32(x0), h1 = tf32(x1);
    return make_float4(h0, h1, bf16x2(x0 - h0, x1 - h1), bf16x2(h0, h1));
}

__device__ __forceinline__ float4 split_w(float w0, float w1)
{
    float h0 = tf32(w0), h1 = tf32(w1);
    return make_float4(h0, h1, bf16x2(h0, h1), bf16x2(w0 - h0, w1 - h1));
}

// D += A B, A 16 x 16 and B 16 x 8 in bf16 pairs.
__device__ __forceinline__ void mma16(float (&d)[4], float a0, float a1, float a2, float a3, float b0, float b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)),
          "r"(__float_as_uint(a3)), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}
""")
edit("taps[i] = split_pair(", "taps[i] = split_w(")
for j in range(4):
    edit(f"slot[{j}] = split_pair(", f"slot[{j}] = split_x(")
edit("""                        mma(small[mu][nu], r0.x, r8.x, r0.y, r8.y, x[nu].z, x[nu].w);
                        mma(small[mu][nu], r0.z, r8.z, r0.w, r8.w, x[nu].x, x[nu].y);
""", """                        mma16(small[mu][nu], r0.z, r8.z, r0.w, r8.w, x[nu].z, x[nu].w);
""")
open(sys.argv[2], "w").write(src)
