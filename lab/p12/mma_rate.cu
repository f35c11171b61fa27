// The tensor cores' rate for mma.sync on this GPU, the floor under puzzle 12: every warp runs
// CHAINS independent accumulators through ITERS mma.sync each, operands in registers, no memory
// traffic. Printed per shape and warps per SM: TFLOP/s and cycles per mma per SMSP.
//   nvcc -arch=sm_90 -O3 mma_rate.cu -o mma_rate && ./mma_rate
#include <cstdio>
#include <cuda_runtime.h>

#define CHAINS 8
#define TF32 "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
#define BF16 "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
template <int SHAPE>
__global__ void rate(float* out, int iters)
{
    float d[CHAINS][4];
    unsigned a = __float_as_uint(1.0f + threadIdx.x * 1e-3f), b = __float_as_uint(1e-3f);
    for (int c = 0; c < CHAINS; c++)
        for (int i = 0; i < 4; i++) d[c][i] = c;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int c = 0; c < CHAINS; c++) {
            if (SHAPE)
                asm volatile(TF32 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                             : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                             : "r"(a), "r"(a ^ c), "r"(a), "r"(a), "r"(b), "r"(b ^ it));
            else
                asm volatile(BF16 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                             : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                             : "r"(a), "r"(a ^ c), "r"(a), "r"(a), "r"(b), "r"(b ^ it));
        }
    }
    float s = 0;
    for (int c = 0; c < CHAINS; c++)
        for (int i = 0; i < 4; i++) s += d[c][i];
    if (s == 1234.5f) out[threadIdx.x] = s;
}

int main()
{
    int sms, khz;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    float* out;
    cudaMalloc(&out, 4096);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const int iters = 4096;
    for (int shape : {1, 0})
    for (int warps : {4, 8, 16}) {
        float best = 1e30f;
        for (int rep = 0; rep < 5; rep++) {
            cudaEventRecord(e0);
            if (shape) rate<1><<<sms, 32 * warps>>>(out, iters);
            else rate<0><<<sms, 32 * warps>>>(out, iters);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (rep > 0 && ms < best) best = ms;
        }
        double mmas = (double)sms * warps * iters * CHAINS;
        double tflops = mmas * 2 * 16 * 8 * (shape ? 8 : 16) / (best * 1e-3) / 1e12;
        double cycles = (best * 1e-3) * khz * 1e3 / (mmas / sms / 4);
        std::printf("mma.sync %s, %2d warps/SM: %.1f TFLOP/s, %.2f cycles per mma per SMSP (at %d MHz)\n",
                    shape ? "m16n8k8 tf32" : "m16n8k16 bf16", warps, tflops, cycles, khz / 1000);
    }
    std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
