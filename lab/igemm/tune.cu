// Standalone timing harness for puzzle 11's solution (nvcc, no runner): compiles
// solutions/puzzle-11.cu with the shape macros given by -D, checks it against a float32 direct
// convolution on the GPU with the puzzle's tolerance (|x - ref| <= 0.05 + 0.01 |ref|) and times it
// on puzzle 11's three full-scale shapes with CUDA events (median of RUNS launches, the
// inputs rotated among copies of 256 MB or more, as `runner bench` does).
// Build: nvcc -O3 -arch=sm_90 -DBLOCK_M=128 ... -o tune lab/igemm/tune.cu (the Hopper path:
// -gencode=arch=compute_90a,code=sm_90a); run: ./tune NAME
// A kernel source that defines WEIGHT_TRANSPOSED is given the weight as [oc][k] (KRSC) instead of
// HWIO (round 15); the reference still reads HWIO. A source that defines GRID_X_MULTIPLE (clusters)
// gets its grid rounded up to a multiple of it.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

// -DSOLUTION='"file"' times another version of the solution (e.g. the previous one) alike.
#ifndef SOLUTION
#define SOLUTION "../../solutions/puzzle-11.cu"
#endif
#include SOLUTION

#define CHECK(x)                                                                    \
    do {                                                                            \
        cudaError_t check_err = (x);                                                        \
        if (check_err != cudaSuccess) {                                                   \
            printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(check_err)); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

#include "direct.cuh"

int main(int argc, char** argv)
{
    const char* name = argc > 1 ? argv[1] : "default";
    int runs = 50;
    int shapes[3][4] = {{16, 64, 64, 128}, {32, 56, 64, 64}, {8, 128, 128, 128}};
    // The launch as the compiled module declares it (a file may declare another one per
    // architecture, so the host's view of its macros may not be the device's).
    int shape[4];
    CHECK(cudaMemcpyFromSymbol(shape, launch_shape, sizeof shape));
    const int threads = shape[0], block_m = shape[1], block_n = shape[2], smem = shape[3];
    printf("%s: launch %d threads, %d x %d tiles, %d bytes of shared memory\n", name, threads, block_m, block_n, smem);
    CHECK(cudaFuncSetAttribute(conv2d_nhwc, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    for (auto& s : shapes) {
        int batch = s[0], n = s[1], ic = s[2], oc = s[3], k = 3;
        int on = n - k + 1;
        size_t xn = (size_t)batch * n * n * ic, wn = (size_t)k * k * ic * oc, outn = (size_t)batch * on * on * oc;
        std::vector<float> hx(xn), hw(wn);
        unsigned long long st = 42;
        auto rnd = [&]() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (float)((st >> 40) / (double)(1 << 24)) * 2.0f - 1.0f; };
        for (auto& v : hx) v = rnd();
        for (auto& v : hw) v = rnd();
        std::vector<float> hk = hw; // what the kernel gets: HWIO, or [oc][k] where it asks
#ifdef WEIGHT_TRANSPOSED
        for (size_t kk = 0; kk < wn / oc; kk++)
            for (int o = 0; o < oc; o++) hk[o * (wn / oc) + kk] = hw[kk * oc + o];
#endif
        size_t bytes = (xn + wn + outn) * 4;
        int copies = std::max<size_t>(1, ((size_t)256 << 20) / bytes + 1);
        std::vector<float*> xs(copies), ws(copies), outs(copies);
        for (int c = 0; c < copies; c++) {
            CHECK(cudaMalloc(&xs[c], xn * 4));
            CHECK(cudaMalloc(&ws[c], wn * 4));
            CHECK(cudaMalloc(&outs[c], outn * 4));
            CHECK(cudaMemcpy(xs[c], hx.data(), xn * 4, cudaMemcpyHostToDevice));
            CHECK(cudaMemcpy(ws[c], hk.data(), wn * 4, cudaMemcpyHostToDevice));
        }
        float* ref;
        CHECK(cudaMalloc(&ref, outn * 4));
        float* wref;
        CHECK(cudaMalloc(&wref, wn * 4));
        CHECK(cudaMemcpy(wref, hw.data(), wn * 4, cudaMemcpyHostToDevice));
        direct<<<(outn + 255) / 256, 256>>>(xs[0], wref, ref, batch, n, n, ic, oc, k, k);
        long long m = (long long)batch * on * on;
        dim3 grid((m + block_m - 1) / block_m, (oc + block_n - 1) / block_n);
#ifdef GRID_X_MULTIPLE
        grid.x = (grid.x + GRID_X_MULTIPLE - 1) / GRID_X_MULTIPLE * GRID_X_MULTIPLE;
#endif
        CHECK(cudaMemset(outs[0], 0xff, outn * 4));
        conv2d_nhwc<<<grid, threads, smem>>>(xs[0], ws[0], outs[0], batch, n, n, ic, oc, k, k);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        std::vector<float> got(outn), want(outn);
        CHECK(cudaMemcpy(got.data(), outs[0], outn * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(want.data(), ref, outn * 4, cudaMemcpyDeviceToHost));
        double maxerr = 0, worst = 0;
        for (size_t i = 0; i < outn; i++) {
            double e = std::fabs((double)got[i] - want[i]);
            if (!(e == e)) e = 1e30;
            maxerr = std::max(maxerr, e);
            worst = std::max(worst, e / (0.05 + 0.01 * std::fabs((double)want[i])));
        }
        for (int i = 0; i < 5; i++)
            conv2d_nhwc<<<grid, threads, smem>>>(xs[i % copies], ws[i % copies], outs[i % copies], batch, n, n, ic, oc, k, k);
        std::vector<cudaEvent_t> ev(2 * runs);
        for (auto& e : ev) CHECK(cudaEventCreate(&e));
        for (int i = 0; i < runs; i++) {
            CHECK(cudaEventRecord(ev[2 * i]));
            conv2d_nhwc<<<grid, threads, smem>>>(xs[i % copies], ws[i % copies], outs[i % copies], batch, n, n, ic, oc, k, k);
            CHECK(cudaEventRecord(ev[2 * i + 1]));
        }
        CHECK(cudaDeviceSynchronize());
        std::vector<float> t(runs);
        for (int i = 0; i < runs; i++) CHECK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
        std::sort(t.begin(), t.end());
        double us = t[runs / 2] * 1e3, flop = 2.0 * m * oc * 9.0 * ic;
        printf("%-28s N%d %dx%d IC%d OC%d: %8.1f us (min %.1f) %6.1f TFLOP/s  max|err| %.2e (%.2f of tol) %s\n", name,
               batch, n, n, ic, oc, us, t[0] * 1e3, flop / us / 1e6, maxerr, worst, worst <= 1 ? "ok" : "FAIL");
        for (int c = 0; c < copies; c++) { cudaFree(xs[c]); cudaFree(ws[c]); cudaFree(outs[c]); }
        cudaFree(ref);
        cudaFree(wref);
        for (auto& e : ev) cudaEventDestroy(e);
    }
    return 0;
}
