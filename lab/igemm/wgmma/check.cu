// Correctness of puzzle 11's solution (or -DSOLUTION) on small and odd shapes, against a float32
// direct convolution with the puzzle's tolerance. Build as tune.cu; run: ./check NAME
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#ifndef SOLUTION
#define SOLUTION "../../../solutions/puzzle-11.cu"
#endif
#include SOLUTION

#include "../direct.cuh"

int main(int argc, char** argv)
{
    const char* name = argc > 1 ? argv[1] : "default";
    // batch, rows, cols, ic, oc, kr, kc
    int shapes[][7] = {{1, 5, 5, 1, 1, 3, 3},      {2, 9, 7, 3, 5, 3, 2},    {1, 20, 20, 4, 8, 3, 3},
                       {2, 17, 19, 32, 64, 3, 3},  {3, 33, 31, 64, 128, 3, 3}, {1, 40, 40, 36, 100, 3, 3},
                       {2, 30, 30, 128, 200, 1, 1}, {1, 12, 70, 96, 132, 5, 4}, {4, 16, 16, 8, 256, 3, 3},
                       {1, 8, 8, 13, 7, 2, 2},      {2, 64, 64, 64, 128, 3, 3}, {1, 130, 3, 6, 130, 3, 3}};
    int fails = 0;
    int shape[4];
    cudaMemcpyFromSymbol(shape, launch_shape, sizeof shape);
    const int threads = shape[0], block_m = shape[1], block_n = shape[2], smem = shape[3];
    cudaFuncSetAttribute(conv2d_nhwc, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (auto& s : shapes) {
        int batch = s[0], rows = s[1], cols = s[2], ic = s[3], oc = s[4], kr = s[5], kc = s[6];
        int orow = rows - kr + 1, ocol = cols - kc + 1;
        size_t xn = (size_t)batch * rows * cols * ic, wn = (size_t)kr * kc * ic * oc,
               outn = (size_t)batch * orow * ocol * oc;
        std::vector<float> hx(xn), hw(wn);
        unsigned long long st = 7;
        auto rnd = [&]() { st = st * 6364136223846793005ULL + 1442695040888963407ULL; return (float)((st >> 40) / (double)(1 << 24)) * 2.0f - 1.0f; };
        for (auto& v : hx) v = rnd();
        for (auto& v : hw) v = rnd();
        float *x, *w, *out, *ref;
        cudaMalloc(&x, xn * 4); cudaMalloc(&w, wn * 4); cudaMalloc(&out, outn * 4); cudaMalloc(&ref, outn * 4);
        cudaMemcpy(x, hx.data(), xn * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(w, hw.data(), wn * 4, cudaMemcpyHostToDevice);
        cudaMemset(out, 0xff, outn * 4);
        direct<<<(outn + 255) / 256, 256>>>(x, w, ref, batch, rows, cols, ic, oc, kr, kc);
        long long m = (long long)batch * orow * ocol;
        dim3 grid((m + block_m - 1) / block_m, (oc + block_n - 1) / block_n);
#ifdef GRID_X_MULTIPLE
        grid.x = (grid.x + GRID_X_MULTIPLE - 1) / GRID_X_MULTIPLE * GRID_X_MULTIPLE;
#endif
        conv2d_nhwc<<<grid, threads, smem>>>(x, w, out, batch, rows, cols, ic, oc, kr, kc);
        cudaError_t err = cudaDeviceSynchronize();
        std::vector<float> got(outn), want(outn);
        cudaMemcpy(got.data(), out, outn * 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(want.data(), ref, outn * 4, cudaMemcpyDeviceToHost);
        double worst = 0;
        size_t at = 0;
        for (size_t i = 0; i < outn; i++) {
            double e = std::fabs((double)got[i] - want[i]) / (0.05 + 0.01 * std::fabs((double)want[i]));
            if (!(e == e)) e = 1e30;
            if (e > worst) { worst = e; at = i; }
        }
        bool ok = err == cudaSuccess && worst <= 1;
        fails += !ok;
        printf("%s N%d %dx%d IC%d OC%d K%dx%d: %s worst %.3f of tol at %zu (got %g want %g) %s\n", name, batch, rows, cols, ic, oc, kr, kc,
               ok ? "ok" : "FAIL", worst, at, got[at], want[at], cudaGetErrorString(err));
        cudaFree(x); cudaFree(w); cudaFree(out); cudaFree(ref);
        if (err != cudaSuccess) return 1;
    }
    printf("%s: %d failing\n", name, fails);
    return 0;
}
