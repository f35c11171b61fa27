// Three patterns that ptxas compiles wrongly for sm_90, found by the differential fuzzing
// (issue 36; NVRTC and nvcc 13.0.88, -arch=sm_90; the simulator's answers are the right ones):
//   1. A float converted to an integer, back to a float and to an integer again, folded into one
//      conversion of the float: __float2uint_ru(__ull2float_rd((unsigned long long)
//      __float2uint_rd(x))) becomes F2I.U32.CEIL of x, 1 for x = 1e-38 where floor gives 0, 0
//      converts to 0.0 and ceil to 0 (seed 910189 of the old generator, H200); the same through
//      __uint2float_rn with __float2uint_rn inside (seed 2004306, H100).
//   2. __float2ll_rz of a half's bits read as a float becomes F2I.S64.CEIL of the original float:
//      -35 for -35.406, where the bits 0xd06d read as a float are a subnormal (7.5e-41) whose
//      truncation is 0 (seed 910785, H200; seeds 2002853 and 2003828 through __float2int_rz, H100).
//   3. (unsigned long long)__umulhi(a, b) - y becomes IMAD.HI.U32 with y's low word negated as the
//      addend and IADD3.X ~y_hi + carry for the high word: when y's low word is 0 there is no
//      carry, and the high word comes out 2^32 too small (seed 2000035, H200: 0 - 0 gave
//      0xffffffff00000000).
//   4. A double whose high word a loop carries through __double2hiint into __hiloint2double
//      (d = __hiloint2double(__double2hiint(d), (int)(short)k)) loses that word: ptxas reuses its
//      register for the loop's own arithmetic (the unrolled loop's count here, PRMT of k in the
//      fuzz kernel), so the double comes out with a high word the PTX never wrote (seed 2044455,
//      H200: the new low word in both halves). NVRTC 13.0.88's PTX is right; ptxas 13.0.88
//      -arch=sm_90 gives the wrong SASS here too (no GPU needed to see it).
// The generator (`kernels/fuzz/src/expr.rs`) passes the operand of every integer-to-float
// conversion, the bits of a half, a high product and a high word going back into a double
// through a volatile shared-memory copy (`opaque32`, `opaque64`), so it never asks these.
// Run on a GPU machine: nvcc -arch=sm_90 -o ptxas_fold bench/ptxas_fold.cu && ./ptxas_fold
// (cuobjdump -sass ptxas_fold shows the F2I that replaced each chain).
#include <cstdio>
#include <cstring>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void chains(const float* in, const unsigned* w, unsigned* u, long long* l)
{
    unsigned long long v = (unsigned long long)__float2uint_rd(in[0]);
    u[0] = __float2uint_ru(__ull2float_rd(v));
    u[1] = __float2uint_ru(__uint2float_rn(__float2uint_rn(in[0])));
    float f = __uint_as_float((unsigned)__half_as_ushort(__float2half_ru(in[1])));
    l[0] = __float2ll_rz(f);
    unsigned long long y = (unsigned long long)w[2] << 32 | w[3];
    l[1] = (long long)((unsigned long long)__umulhi(w[0], w[1]) - y);
}

__global__ void carried(const double* in, const int* n, double* out)
{
    double d = in[0];
    for (int k = 0; k < n[0]; k++) d = __hiloint2double(__double2hiint(d), (int)(short)k);
    out[0] = d;
}

int main()
{
    float host[2] = {1e-38f, -35.406f};
    unsigned words[4] = {1, 0, 0, 0}; // umulhi(1, 0) - 0: 0
    float* in;
    unsigned *w, *u;
    long long* l;
    cudaMalloc(&in, sizeof host);
    cudaMalloc(&w, sizeof words);
    cudaMalloc(&u, 2 * sizeof(unsigned));
    cudaMalloc(&l, 2 * sizeof(long long));
    cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemcpy(w, words, sizeof words, cudaMemcpyHostToDevice);
    chains<<<1, 1>>>(in, w, u, l);
    unsigned gu[2] = {0, 0};
    long long gl[2] = {0, 0};
    cudaMemcpy(gu, u, sizeof gu, cudaMemcpyDeviceToHost);
    cudaMemcpy(gl, l, sizeof gl, cudaMemcpyDeviceToHost);
    printf("1 (ull): GPU %u, right 0%s\n", gu[0], gu[0] == 0 ? "" : " (miscompiled)");
    printf("1 (uint): GPU %u, right 0%s\n", gu[1], gu[1] == 0 ? "" : " (miscompiled)");
    printf("2: GPU %lld, right 0%s\n", gl[0], gl[0] == 0 ? "" : " (miscompiled)");
    printf("3: GPU %#llx, right 0%s\n", (unsigned long long)gl[1], gl[1] == 0 ? "" : " (miscompiled)");
    // 4: 1.0 (high word 0x3ff00000) through four turns of the loop: the low word 3, the high kept.
    double one = 1.0, *d, gd = 0;
    int turns[1] = {4}, *n;
    cudaMalloc(&d, 2 * sizeof(double));
    cudaMalloc(&n, sizeof turns);
    cudaMemcpy(d, &one, sizeof one, cudaMemcpyHostToDevice);
    cudaMemcpy(n, turns, sizeof turns, cudaMemcpyHostToDevice);
    carried<<<1, 1>>>(d, n, d + 1);
    cudaMemcpy(&gd, d + 1, sizeof gd, cudaMemcpyDeviceToHost);
    unsigned long long bits;
    memcpy(&bits, &gd, sizeof bits);
    printf("4: GPU %#llx, right 0x3ff0000000000003%s\n", bits,
           bits == 0x3ff0000000000003ull ? "" : " (miscompiled)");
    return 0;
}
