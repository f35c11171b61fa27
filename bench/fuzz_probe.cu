// Probe of GPU semantics the simulator must match (issue 16's fuzzing): NaN rules and rounding.
// Run on a GPU machine: nvcc -arch=sm_90 -o probe bench/fuzz_probe.cu && ./probe; kernels/src/sim/gpu_facts.rs
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
int main() {
  unsigned long long h[6] = {0x7ff4000000000123ull, 0xfff0000000000456ull, 0x3ff0000000000000ull, 0x7ff0000000000000ull, 0x0000000000000001ull, 0x7fa00001ull};
  unsigned long long* d; cudaMalloc(&d, sizeof h); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  k<<<1, 1>>>(d); printf("sync %d\n", (int)cudaDeviceSynchronize());
}
