// Probe of GPU semantics the simulator must match (issue 16's fuzzing): NaN rules and rounding.
// Run on a GPU machine: nvcc -arch=sm_90 -o probe bench/fuzz_probe.cu && ./probe; kernels/sim/src/gpu_facts.rs
// holds what an H100 printed.
#include <cstdio>
#include <cuda_fp16.h>
__device__ double D(unsigned long long b) { return __longlong_as_double((long long)b); }
__device__ unsigned long long B(double d) { return (unsigned long long)__double_as_longlong(d); }
__global__ void k(const unsigned long long* in) {
  double n1 = D(in[0]), n2 = D(in[1]), one = D(in[2]), inf = D(in[3]), tiny = D(in[4]);
  float fn = __uint_as_float((unsigned)in[5]), f1 = 1.0f, finf = __uint_as_float(0x7f800000u);
  float fsub = __uint_as_float(1u), fbig = __uint_as_float(0x7f000000u);
  printf("dadd n1+1 %016llx 1+n2 %016llx n1+n2 %016llx n2+n1 %016llx\n", B(n1 + one), B(one + n2), B(n1 + n2), B(n2 + n1));
  printf("dinv inf-inf %016llx 0*inf %016llx sqrt(-1) %016llx\n", B(inf - inf), B((one - one) * inf), B(sqrt(-one)));
  printf("dmul n1*1 %016llx ddiv 1/n2 %016llx fma(n1,1,n2) %016llx fma(1,n2,n1) %016llx fma(1,1,n2) %016llx\n", B(n1 * one), B(one / n2), B(fma(n1, one, n2)), B(fma(one, n2, n1)), B(fma(one, one, n2)));
  printf("dsqrt n1 %016llx drcp n2 %016llx fmin n1,n2 %016llx\n", B(sqrt(n1)), B(__drcp_rn(n2)), B(fmin(n1, n2)));
  printf("f2i nan s32 %08x u32 %08x s64 %016llx u64 %016llx\n", __float2int_rn(fn), __float2uint_rn(fn), __float2ll_rn(fn), __float2ull_rn(fn));
  printf("d2i nan s32 %08x u32 %08x s64 %016llx u64 %016llx\n", __double2int_rz(n1), __double2uint_rz(n1), __double2ll_rz(n1), __double2ull_rz(n1));
  printf("cvt f2d nan %016llx d2f n1 %08x d2f n2 %08x\n", B((double)fn), __float_as_uint(__double2float_rn(n1)), __float_as_uint(__double2float_rz(n2)));
  printf("f32 nan add %08x f+1 %08x\n", __float_as_uint(fn + f1), __float_as_uint(__fadd_rz(fn, f1)));
  printf("dir fmul_ru sub*sub %08x fmul_rd -sub*sub %08x fdiv_ru sub/big %08x frcp_ru big %08x frcp_rz inf %08x fdiv_rz 1/0 %08x fadd_rz inf+1 %08x\n",
    __float_as_uint(__fmul_ru(fsub, fsub)), __float_as_uint(__fmul_rd(-fsub, fsub)), __float_as_uint(__fdiv_ru(fsub, fbig)), __float_as_uint(__frcp_ru(fbig)), __float_as_uint(__frcp_rz(finf)), __float_as_uint(__fdiv_rz(f1, f1 - f1)), __float_as_uint(__fadd_rz(finf, f1)));
  printf("dir fmaf_ru sub,sub,0 %08x fsqrt_ru sub %08x d2f_ru tiny %08x dmul_ru tiny %016llx ddiv_rz 1/0 %016llx dadd_rz inf %016llx\n",
    __float_as_uint(__fmaf_ru(fsub, fsub, 0.0f)), __float_as_uint(__fsqrt_ru(fsub)), __float_as_uint(__double2float_ru(tiny)), B(__dmul_ru(tiny, tiny)), B(__ddiv_rz(one, one - one)), B(__dadd_rz(inf, one)));
  printf("d2i modes nan rn %08x ru %08x rd %08x rz %08x u32 rn %08x -inf rn %08x f2i rz %08x ru %08x rd %08x f2ll rz %016llx d2ll rn %016llx\n",
    __double2int_rn(n1), __double2int_ru(n1), __double2int_rd(n1), __double2int_rz(n1), __double2uint_rn(n1), __double2int_rn(-inf), __float2int_rz(fn), __float2int_ru(fn), __float2int_rd(fn), __float2ll_rz(fn), __double2ll_rn(n1));
  printf("round nan floorf %08x rintf %08x floor %016llx rint %016llx\n", __float_as_uint(floorf(fn)), __float_as_uint(rintf(fn)), B(floor(n1)), B(rint(n2)));
  printf("half nan %04x f2h_rz big %04x h2f nan %08x\n", __half_as_ushort(__float2half_rn(fn)), __half_as_ushort(__float2half_rz(fbig)), __float_as_uint(__half2float(__ushort_as_half((unsigned short)0x7e01))));
}
// NaN operand order and sign, f64 negation, and f64 directed rounding where an estimated error
// term once failed (round 2 of the probe: kernels/sim/src/gpu_facts.rs).
__global__ void k2(const unsigned long long* in) {
  double n1 = D(in[0]), n2 = D(in[1]), n3 = D(in[2]), n4 = D(in[3]);
  double big = D(in[4]), big2 = D(in[5]), c969 = D(in[6]), three = D(in[7]), two = D(in[8]), mx = D(in[9]);
  float fa = __uint_as_float((unsigned)in[10]), fb = __uint_as_float((unsigned)in[11]);
  printf("dmin n2,n1 %016llx n1,n3 %016llx n3,n1 %016llx dmax n1,n2 %016llx n2,n1 %016llx n1,n4 %016llx n4,n1 %016llx\n",
    B(fmin(n2, n1)), B(fmin(n1, n3)), B(fmin(n3, n1)), B(fmax(n1, n2)), B(fmax(n2, n1)), B(fmax(n1, n4)), B(fmax(n4, n1)));
  printf("dadd n1+n3 %016llx n3+n1 %016llx n1+n4 %016llx n4+n1 %016llx dmul n3*n1 %016llx fma(n3,n1,1) %016llx\n",
    B(n1 + n3), B(n3 + n1), B(n1 + n4), B(n4 + n1), B(n3 * n1), B(fma(n3, n1, two)));
  printf("dneg n1 %016llx n2 %016llx dabs n2 %016llx fminf %08x fmaxf %08x\n",
    B(-n1), B(-n2), B(fabs(n2)), __float_as_uint(fminf(fa, fb)), __float_as_uint(fmaxf(fa, fb)));
  printf("exact fma_rz %016llx fma_rd %016llx fma_ru %016llx fma_rn %016llx ddiv_rz %016llx ddiv_ru %016llx drcp_rz %016llx drcp_ru %016llx\n",
    B(__fma_rz(big, big2, -c969)), B(__fma_rd(big, big2, -c969)), B(__fma_ru(big, big2, -c969)), B(__fma_rn(big, big2, -c969)),
    B(__ddiv_rz(three, two)), B(__ddiv_ru(three, two)), B(__drcp_rz(mx)), B(__drcp_ru(mx)));
}
int main() {
  unsigned long long h[6] = {0x7ff4000000000123ull, 0xfff0000000000456ull, 0x3ff0000000000000ull, 0x7ff0000000000000ull, 0x0000000000000001ull, 0x7fa00001ull};
  unsigned long long* d; cudaMalloc(&d, sizeof h); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  k<<<1, 1>>>(d); printf("sync %d\n", (int)cudaDeviceSynchronize());
  unsigned long long h2[12] = {0x7ff4000000000123ull, 0xfff0000000000456ull, 0x7ff8000000000001ull, 0xfff4000000000123ull,
    0x6570000000000000ull /* 2^600 */, 0x5a70000000000000ull /* 2^424 */, 0x7c80000000000000ull /* 2^969 */,
    3ull /* 3 quanta */, 0x4000000000000000ull /* 2 */, 0x7fefffffffffffffull, 0x7fa00001ull, 0xffc00abcull};
  unsigned long long* d2; cudaMalloc(&d2, sizeof h2); cudaMemcpy(d2, h2, sizeof h2, cudaMemcpyHostToDevice);
  k2<<<1, 1>>>(d2); printf("sync %d\n", (int)cudaDeviceSynchronize());
}
