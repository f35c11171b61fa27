// Standalone tuning harness for puzzles 09 and 10 (nvcc, no runner): every variant object that
// build.sh compiled is listed in gen/table.inc; each is launched exactly as the runner launches
// it (puzzle 09: blocks of (COL_BLOCK, ROW_BLOCK) threads over the outputs; puzzle 10: the
// declared launch_shape with 4 * (TILE_ROWS + KR - 1) * (TILE_COLS + KC - 1) bytes of dynamic
// shared memory), checked on small pitched cases (NaN in the input's padding, a sentinel in the
// output's, one case with an input that is not 16-byte aligned) and on the full-scale shapes
// against a float64 GPU reference, then timed at full scale: CUDA events between launches queued
// back to back, inputs rotated among copies of at least 256 MiB, median of RUNS after 5 warm-ups.
// Usage: harness2d [--only SUBSTRING] [--runs N] [--once NAME N K] (one launch, for ncu)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

struct Variant {
    const char* name;
    int puzzle;
    const void* (*fn)();
    void (*shape)(int*);  // puzzle 10: reads launch_shape
    int row_block, col_block;  // puzzle 09
};

#include "gen/decls.inc"
static Variant variants[] = {
#include "gen/table.inc"
};

static const float OUT_SENTINEL = -12345.5f;

__global__ void fill(float* p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed * 0x9e3779b9u;
        x ^= x >> 16;
        x *= 0x7feb352d;
        x ^= x >> 15;
        x *= 0x846ca68b;
        x ^= x >> 16;
        float v = (x >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
        p[i] = v == 0.0f ? 0.5f : v;
    }
}

__global__ void set(float* p, size_t n, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

// Padding of a pitched image: NaN past each row's last column.
__global__ void pad_nan(float* p, int rows, int cols, int stride)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)rows * stride;
         i += (size_t)gridDim.x * blockDim.x)
        if ((int)(i % stride) >= cols) p[i] = __int_as_float(0x7fc00bad);
}

__global__ void reference(const float* in, const float* k, double* out, int ir, int ic, int is, int kr, int kc)
{
    int orow = ir - kr + 1, ocol = ic - kc + 1;
    size_t n = (size_t)orow * ocol;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n; t += (size_t)gridDim.x * blockDim.x) {
        int r = t / ocol, c = t % ocol;
        double s = 0;
        for (int i = 0; i < kr; i++)
            for (int j = 0; j < kc; j++) s += (double)in[(size_t)(r + i) * is + c + j] * k[i * kc + j];
        out[t] = s;
    }
}

// Compares: every output within atol = rtol = 1e-3 of the reference, every padding element still
// the sentinel. Counts go to bad[0] (wrong outputs), bad[1] (padding changed).
__global__ void compare(const float* out, const double* ref, int orow, int ocol, int os, unsigned long long* bad)
{
    size_t n = (size_t)orow * os;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n; t += (size_t)gridDim.x * blockDim.x) {
        int r = t / os, c = t % os;
        float v = out[t];
        if (c >= ocol) {
            if (__float_as_int(v) != __float_as_int(OUT_SENTINEL)) atomicAdd(bad + 1, 1ull);
        } else {
            double e = ref[(size_t)r * ocol + c];
            if (!(fabs(v - e) <= 1e-3 + 1e-3 * fabs(e))) atomicAdd(bad, 1ull);
        }
    }
}

struct Launch {
    dim3 grid, block;
    size_t smem;
};

static Launch launch_of(const Variant& v, int orow, int ocol, int kr, int kc)
{
    Launch l;
    if (v.puzzle == 9) {
        l.grid = dim3((ocol + v.col_block - 1) / v.col_block, (orow + v.row_block - 1) / v.row_block);
        l.block = dim3(v.col_block, v.row_block);
        l.smem = 0;
    } else {
        int s[4];
        v.shape(s);
        l.grid = dim3((ocol + s[3] - 1) / s[3], (orow + s[2] - 1) / s[2]);
        l.block = dim3(s[0], s[1]);
        l.smem = 4ull * (s[2] + kr - 1) * (s[3] + kc - 1);
        CK(cudaFuncSetAttribute(v.fn(), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)l.smem));
    }
    return l;
}

static void launch(const Variant& v, const Launch& l, const float* in, const float* k, float* out, int ir, int ic,
                   int is, int kr, int kc, int os)
{
    void* args[] = {&in, &k, &out, &ir, &ic, &is, &kr, &kc, &os};
    CK(cudaLaunchKernel(v.fn(), l.grid, l.block, args, l.smem, 0));
}

struct Small {
    int ir, ic, is, kr, kc, opad, misalign;
};

// One case: fresh inputs, poisoned output, launch, compare. Returns 0 when correct.
static int check(const Variant& v, int ir, int ic, int is, int kr, int kc, int opad, int misalign, unsigned seed)
{
    int orow = ir - kr + 1, ocol = ic - kc + 1, os = ocol + opad;
    float *in, *k, *out;
    double* ref;
    unsigned long long* bad;
    size_t nin = (size_t)ir * is + misalign;
    CK(cudaMalloc(&in, nin * 4));
    CK(cudaMalloc(&k, kr * kc * 4));
    CK(cudaMalloc(&out, (size_t)orow * os * 4));
    CK(cudaMalloc(&ref, (size_t)orow * ocol * 8));
    CK(cudaMalloc(&bad, 16));
    float* x = in + misalign;
    fill<<<1024, 256>>>(in, nin, seed);
    pad_nan<<<1024, 256>>>(x, ir, ic, is);
    fill<<<1, 256>>>(k, kr * kc, seed + 1);
    set<<<1024, 256>>>(out, (size_t)orow * os, OUT_SENTINEL);
    CK(cudaMemset(bad, 0, 16));
    reference<<<2048, 256>>>(x, k, ref, ir, ic, is, kr, kc);
    // Unwritten outputs: the sentinel is far outside any sum of 961 products in [-1, 1).
    Launch l = launch_of(v, orow, ocol, kr, kc);
    launch(v, l, x, k, out, ir, ic, is, kr, kc, os);
    CK(cudaGetLastError());
    compare<<<2048, 256>>>(out, ref, orow, ocol, os, bad);
    unsigned long long h[2];
    CK(cudaMemcpy(h, bad, 16, cudaMemcpyDeviceToHost));
    CK(cudaFree(in));
    CK(cudaFree(k));
    CK(cudaFree(out));
    CK(cudaFree(ref));
    CK(cudaFree(bad));
    if (h[0] || h[1]) {
        printf("  FAIL %s: %dx%d stride %d kernel %dx%d out pad %d misalign %d: %llu wrong, %llu padding changed\n",
               v.name, ir, ic, is, kr, kc, opad, misalign, h[0], h[1]);
        return 1;
    }
    return 0;
}

int main(int argc, char** argv)
{
    const char* only = nullptr;
    int runs = 50;
    const char* once = nullptr;
    int once_n = 0, once_k = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--only")) only = argv[++a];
        else if (!strcmp(argv[a], "--runs")) runs = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--once")) {
            once = argv[++a];
            once_n = atoi(argv[++a]);
            once_k = atoi(argv[++a]);
        }
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int nv = sizeof(variants) / sizeof(variants[0]);
    if (once) {
        for (int i = 0; i < nv; i++) {
            if (strcmp(variants[i].name, once)) continue;
            int n = once_n, kk = once_k, m = n - kk + 1;
            float *x, *k, *out;
            CK(cudaMalloc(&x, (size_t)n * n * 4));
            CK(cudaMalloc(&k, kk * kk * 4));
            CK(cudaMalloc(&out, (size_t)m * m * 4));
            fill<<<4096, 256>>>(x, (size_t)n * n, 1);
            fill<<<1, 256>>>(k, kk * kk, 2);
            Launch l = launch_of(variants[i], m, m, kk, kk);
            launch(variants[i], l, x, k, out, n, n, n, kk, kk, m);
            CK(cudaDeviceSynchronize());
            return 0;
        }
        fprintf(stderr, "no variant %s\n", once);
        return 2;
    }
    printf("%s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
    const Small smalls[] = {
        {3, 3, 3, 2, 2, 0, 0},       {37, 45, 53, 3, 3, 3, 0},    {70, 100, 101, 15, 15, 1, 0},
        {5, 4, 9, 3, 4, 0, 0},       {40, 40, 40, 31, 31, 0, 0},  {129, 200, 204, 5, 1, 2, 0},
        {64, 64, 64, 1, 7, 0, 0},    {33, 300, 304, 2, 2, 5, 0},  {300, 33, 36, 16, 17, 0, 0},
        {200, 260, 260, 3, 3, 0, 1}, {150, 131, 132, 9, 9, 7, 0}, {97, 160, 164, 31, 1, 0, 0},
        {260, 70, 72, 17, 3, 1, 0},  {66, 66, 68, 24, 24, 0, 0},  {1000, 1000, 1000, 5, 5, 0, 0},
    };
    const int shapes[3][2] = {{4096, 3}, {4096, 15}, {8192, 5}};
    std::vector<std::string> table;
    int failures = 0;
    for (int i = 0; i < nv; i++) {
        const Variant& v = variants[i];
        if (only && !strstr(v.name, only)) continue;
        int bad = 0;
        unsigned seed = 100;
        for (const Small& s : smalls) bad += check(v, s.ir, s.ic, s.is, s.kr, s.kc, s.opad, s.misalign, seed++);
        for (auto& sh : shapes) bad += check(v, sh[0], sh[0], sh[0], sh[1], sh[1], 0, 0, seed++);
        failures += bad;
        char line[512];
        int len = snprintf(line, sizeof line, "%-34s %s", v.name, bad ? "FAILED" : "ok    ");
        for (auto& sh : shapes) {
            int n = sh[0], kk = sh[1], m = n - kk + 1;
            size_t bytes = (size_t)n * n * 4;
            int copies = std::max<size_t>(1, ((256ull << 20) + bytes - 1) / bytes);
            std::vector<float*> xs(copies);
            for (int c = 0; c < copies; c++) {
                CK(cudaMalloc(&xs[c], bytes));
                fill<<<4096, 256>>>(xs[c], (size_t)n * n, 7 + c);
            }
            float *k, *out;
            CK(cudaMalloc(&k, kk * kk * 4));
            CK(cudaMalloc(&out, (size_t)m * m * 4));
            fill<<<1, 256>>>(k, kk * kk, 3);
            Launch l = launch_of(v, m, m, kk, kk);
            for (int w = 0; w < 5; w++) launch(v, l, xs[w % copies], k, out, n, n, n, kk, kk, m);
            std::vector<cudaEvent_t> ev(runs + 1);
            for (auto& e : ev) CK(cudaEventCreate(&e));
            CK(cudaEventRecord(ev[0]));
            for (int r = 0; r < runs; r++) {
                launch(v, l, xs[r % copies], k, out, n, n, n, kk, kk, m);
                CK(cudaEventRecord(ev[r + 1]));
            }
            CK(cudaEventSynchronize(ev[runs]));
            CK(cudaGetLastError());
            std::vector<float> t(runs);
            for (int r = 0; r < runs; r++) CK(cudaEventElapsedTime(&t[r], ev[r], ev[r + 1]));
            std::sort(t.begin(), t.end());
            len += snprintf(line + len, sizeof line - len, " | %dx%d %2dx%-2d %7.1f us (%5.1f..%6.1f)", n, n, kk, kk,
                            t[runs / 2] * 1e3, t[0] * 1e3, t[runs - 1] * 1e3);
            for (auto& e : ev) CK(cudaEventDestroy(e));
            for (float* x : xs) CK(cudaFree(x));
            CK(cudaFree(k));
            CK(cudaFree(out));
        }
        printf("%s\n", line);
        fflush(stdout);
        table.push_back(line);
    }
    printf("\n=== table (%s)\n", p.name);
    for (auto& l : table) printf("%s\n", l.c_str());
    printf("%d failing checks\n", failures);
    return failures ? 1 : 0;
}
