// FFMA throughput against the number of source operands read from the register file.
// Same launch as conv_tune's peak (8 blocks of 256 threads per SM); prints GFLOP/s per mode.
//   mode 1: acc = acc * w + b         one register read per FFMA (w, b reused): the peak kernel's form
//   mode 2: acc[c] = x[c] * w + acc[c]  two reads (x, acc), w reused: puzzle 08's inner loop
//   mode 3: acc[c] = x[c] * y[c] + acc[c]  three reads, no reuse possible
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

template <int MODE>
__global__ void fma_mode(float* out, const float* in, int iters)
{
    float acc[16], x[16], y[16];
    int t = threadIdx.x & 31;
#pragma unroll
    for (int c = 0; c < 16; c++) {
        acc[c] = in[t + c];
        x[c] = in[t + 16 + c];
        y[c] = in[t + 32 + c];
    }
    float w = in[t + 48], b = in[t + 49];
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 2; u++) {
#pragma unroll
            for (int c = 0; c < 16; c++) {
                if (MODE == 1) acc[c] = fmaf(acc[c], w, b);
                if (MODE == 2) acc[c] = fmaf(x[c], w, acc[c]);
                if (MODE == 3) acc[c] = fmaf(x[c], y[c], acc[c]);
            }
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < 16; c++) s += acc[c];
    if (s == 1234.5f) out[threadIdx.x] = s;
}

template <int MODE>
static void time_mode(const float* in, float* out, int sms)
{
    const int blocks = sms * 8, threads = 256, iters = 2048;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> ms;
    for (int rep = 0; rep < 23; rep++) {
        cudaEventRecord(e0);
        fma_mode<MODE><<<blocks, threads>>>(out, in, iters);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float t;
        cudaEventElapsedTime(&t, e0, e1);
        if (rep >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    double flop = 2.0 * blocks * threads * (double)iters * 32;
    std::printf("fma mode %d: %.0f GFLOP/s (median %.1f us) %s\n", MODE, flop / (ms[ms.size() / 2] * 1e-3) / 1e9,
                ms[ms.size() / 2] * 1e3, cudaGetErrorString(cudaGetLastError()));
}

int main()
{
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float *in, *out;
    cudaMalloc(&in, 4096);
    cudaMalloc(&out, 4096);
    std::vector<float> h(1024);
    for (int i = 0; i < 1024; i++) h[i] = 0.5f + 1e-3f * i;
    cudaMemcpy(in, h.data(), 4096, cudaMemcpyHostToDevice);
    time_mode<1>(in, out, sms);
    time_mode<2>(in, out, sms);
    time_mode<3>(in, out, sms);
    time_mode<1>(in, out, sms);
    return 0;
}
