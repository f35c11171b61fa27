// Checks and times one solution of puzzles 04 to 08 (the valid contract) on a GPU, with no Rust:
// the device machine has nvcc and no cargo. tune.sh builds this file once per variant:
//   nvcc -arch=sm_90 -O3 -DPUZZLE=8 -DSOLUTION='"../solutions/puzzle-08.cu"' [-DTHREADS=..] ...
// and runs each binary, which prints one table row. The launch rules below are the puzzles' own
// (puzzles/puzzle-NN/src/lib.rs); a change there must be made here too.
//
//   ./conv_tune peak            measured FP32 FMA peak (GFLOP/s), printed alone
//   ./conv_tune NAME PEAK       check on the literal, edge and random cases, then time the full
//                               case (1,500,000 inputs, kernel 2047): 3 warm-ups, 30 timed runs
//                               with events, inputs rotated over 8 buffers (48 MB, past L2)
//
// Built with g++ -DEMU (tune.sh emu), the same checks run on the CPU through emu.h, without timing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifdef EMU
#include "emu.h"
#define LAUNCH(grid, block, shared, ...) emu_launch(grid, block, [&] { conv1d(__VA_ARGS__); })
#else
#include <cuda_runtime.h>
#define LAUNCH(grid, block, shared, ...) conv1d<<<grid, block, shared>>>(__VA_ARGS__)
#endif

#include SOLUTION

#ifndef ATOL
#define ATOL 1e-3
#endif
#ifndef RTOL
#define RTOL 1e-3
#endif

#ifdef EMU
#define CHECK(x) (x)
static void* dev_alloc(size_t bytes) { return std::malloc(bytes); }
static void copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
static void dev_free(void* p) { std::free(p); }
#else
#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)
static void* dev_alloc(size_t bytes)
{
    void* p = nullptr;
    CHECK(cudaMalloc(&p, bytes));
    return p;
}
static void copy(void* dst, const void* src, size_t bytes) { CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault)); }
static void dev_free(void* p) { CHECK(cudaFree(p)); }
#endif

struct Shape {
    unsigned grid, block, shared;
};

static unsigned ceil_div(long a, long b) { return (unsigned)((a + b - 1) / b); }

// The launch rule of each puzzle, for `outputs` outputs and a kernel of `k` taps.
static Shape shape_for(int outputs, int k)
{
#if PUZZLE == 4 || PUZZLE == 5
    return {ceil_div(outputs, TPB), TPB, (unsigned)(TPB + k - 1) * 4};
#elif PUZZLE == 6
    return {ceil_div(outputs, TPB * OUTPUTS_PER_THREAD), TPB, (unsigned)(TPB * OUTPUTS_PER_THREAD + k - 1) * 4};
#elif PUZZLE == 7
    (void)k;
    return {ceil_div(outputs, BLOCK_SIZE), THREADS, 0};
#elif PUZZLE == 8 || PUZZLE == 12
    (void)k;
    // Read once: a device-to-host copy inside the timed region would add ~12 us to every launch.
    static int s[3] = {0, 0, 0};
    if (s[0] == 0) {
#ifdef EMU
        std::memcpy(s, launch_shape, sizeof s);
#else
        CHECK(cudaMemcpyFromSymbol(s, launch_shape, sizeof s));
#endif
    }
    return {ceil_div(outputs, s[1]), (unsigned)s[0], (unsigned)s[2]};
#endif
}

static void upload_taps(const std::vector<float>& w)
{
#if PUZZLE == 5 || PUZZLE == 6
#ifdef EMU
    std::memcpy(c_kernel, w.data(), w.size() * 4);
#else
    CHECK(cudaMemcpyToSymbol(c_kernel, w.data(), w.size() * 4));
#endif
#else
    (void)w;
#endif
}

static void run(const float* in, const float* w, float* out, int n, int k)
{
    Shape s = shape_for(n - k + 1, k);
#ifndef EMU
    static unsigned opted_in = 48 * 1024;  // raised once, outside the timed launches
    if (s.shared > opted_in) {
        CHECK(cudaFuncSetAttribute(conv1d, cudaFuncAttributeMaxDynamicSharedMemorySize, s.shared));
        opted_in = s.shared;
    }
#endif
    LAUNCH(s.grid, s.block, s.shared, in, w, out, n, k);
#ifndef EMU
    CHECK(cudaGetLastError());
#endif
}

static std::vector<float> signal(std::mt19937_64& rng, size_t n)
{
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) {
        x = u(rng);
        if (std::fabs(x) < 1e-3f) x = 0.5f;
    }
    return v;
}

static double reference_at(const std::vector<float>& x, const std::vector<float>& w, size_t i)
{
    double s = 0.0;
    for (size_t j = 0; j < w.size(); j++) s += (double)x[i + j] * (double)w[j];
    return s;
}

// Runs one case with the output poisoned with NaN; compares every output (or a sample of
// `sample` of them, both ends included). Returns the worst error over the tolerance (<= 1 passes).
static double check(const char* name, const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<double>* expected, size_t sample, bool verbose)
{
    int n = (int)x.size(), k = (int)w.size(), outputs = n - k + 1;
    float* dx = (float*)dev_alloc(x.size() * 4);
    float* dw = (float*)dev_alloc(w.size() * 4);
    float* dout = (float*)dev_alloc((size_t)outputs * 4);
    copy(dx, x.data(), x.size() * 4);
    copy(dw, w.data(), w.size() * 4);
    std::vector<float> got(outputs, NAN);
    copy(dout, got.data(), got.size() * 4);
    upload_taps(w);
    run(dx, dw, dout, n, k);
    copy(got.data(), dout, got.size() * 4);
    std::vector<size_t> idx;
    if (sample == 0 || (size_t)outputs <= sample) {
        for (int i = 0; i < outputs; i++) idx.push_back(i);
    } else {
        std::mt19937_64 pick(7);
        for (size_t i = 0; i < 256; i++) idx.push_back(i), idx.push_back(outputs - 1 - i);
        while (idx.size() < sample) idx.push_back(pick() % outputs);
    }
    double worst = 0.0, max_abs = 0.0;
    size_t bad = 0, first_bad = 0;
    for (size_t i : idx) {
        double want = expected ? (*expected)[i] : reference_at(x, w, i);
        double err = std::isfinite(got[i]) ? std::fabs(got[i] - want) : INFINITY;
        double ratio = err / (ATOL + RTOL * std::fabs(want));
        if (ratio > 1.0 && bad++ == 0) first_bad = i;
        worst = std::max(worst, ratio);
        max_abs = std::max(max_abs, err);
    }
    if (verbose || bad) {
        std::printf("  %-28s n=%-8d k=%-5d %s max_abs_err=%.3g worst/tol=%.3g", name, n, k, bad ? "FAIL" : "ok  ",
                    max_abs, worst);
        if (bad) std::printf(" (%zu bad, first at %zu: got %g)", bad, first_bad, got[first_bad]);
        std::printf("\n");
    }
    dev_free(dx);
    dev_free(dw);
    dev_free(dout);
    return worst;
}

static bool check_all(bool verbose)
{
    bool ok = true;
    auto literal = [&](const char* name, std::vector<float> x, std::vector<float> w, std::vector<double> want) {
        ok &= check(name, x, w, &want, 0, verbose) <= 1.0;
    };
    literal("example-1", {1, 2, 3, 4, 5}, {1, 0, -1}, {-2, -2, -2});
    literal("example-2", {2, 4, 6, 8}, {0.5f, 0.2f}, {1.8, 3.2, 4.6});
    literal("example-identity", {3, -1, 4, 1.5f, -9, 2.5f}, {1}, {3, -1, 4, 1.5, -9, 2.5});
    literal("example-step", {1, 1, 1, 0, 0, 0}, {1, -1}, {0, 0, 1, 0, 0});
    literal("edge-both-1", {2.5f}, {-1.5f}, {-3.75});
    std::mt19937_64 rng(2024);
    struct Size {
        int n, k;
        bool big;
    };
    const Size sizes[] = {{37, 37, false},     {10000, 3, false},    {106, 5, false},     {1000, 33, false},
                          {3000, 300, false},  {4608, 513, false},   {20000, 2047, false}, {2047, 2047, false},
                          {100003, 1000, true}, {1500000, 2047, true}};
    for (const Size& s : sizes) {
#ifdef EMU
        if (s.big) continue;
#endif
        auto x = signal(rng, s.n), w = signal(rng, s.k);
        std::string name = "random " + std::to_string(s.n) + "x" + std::to_string(s.k);
        ok &= check(name.c_str(), x, w, nullptr, s.big ? 8192 : 0, verbose) <= 1.0;
    }
    return ok;
}

#ifndef EMU
__global__ void fma_peak(float* out, float a, float b, int iters)
{
    float v[8];
#pragma unroll
    for (int c = 0; c < 8; c++) v[c] = threadIdx.x * 1e-3f + c;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 4; u++) {
#pragma unroll
            for (int c = 0; c < 8; c++) v[c] = fmaf(v[c], a, b);
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < 8; c++) s += v[c];
    if (s == 1234.5f) out[threadIdx.x] = s;  // never true; keeps the work alive
}

static double median(std::vector<float> t)
{
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static void peak()
{
    int dev = 0, sms = 0, clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    float* out = (float*)dev_alloc(4096);
    const int blocks = sms * 8, threads = 256, iters = 4096;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int rep = 0; rep < 23; rep++) {
        CHECK(cudaEventRecord(e0));
        fma_peak<<<blocks, threads>>>(out, 0.999f, 0.001f, iters);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float t;
        CHECK(cudaEventElapsedTime(&t, e0, e1));
        if (rep >= 3) ms.push_back(t);
    }
    CHECK(cudaGetLastError());
    double flop = 2.0 * blocks * threads * (double)iters * 32;
    double measured = flop / (median(ms) * 1e-3) / 1e9;
    double nominal = 2.0 * sms * 128 * (clock_khz * 1e3) / 1e9;
    std::fprintf(stderr, "device %s, %d SMs, clock %d MHz: nominal FP32 FMA peak %.0f GFLOP/s, measured %.0f\n",
                 prop.name, sms, clock_khz / 1000, nominal, measured);
    std::printf("%.0f\n", measured);
}

static void bench(const char* name, double peak_gflops)
{
    const int n = 1500000, k = 2047, outputs = n - k + 1, buffers = 8;
    std::mt19937_64 rng(99);
    std::vector<float*> dx(buffers);
    for (auto& p : dx) {
        auto x = signal(rng, n);
        p = (float*)dev_alloc((size_t)n * 4);
        copy(p, x.data(), (size_t)n * 4);
    }
    auto w = signal(rng, k);
    float* dw = (float*)dev_alloc(k * 4);
    float* dout = (float*)dev_alloc((size_t)outputs * 4);
    copy(dw, w.data(), k * 4);
    upload_taps(w);
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int rep = 0; rep < 33; rep++) {
        CHECK(cudaEventRecord(e0));
        run(dx[rep % buffers], dw, dout, n, k);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float t;
        CHECK(cudaEventElapsedTime(&t, e0, e1));
        if (rep >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    double gflops = 2.0 * outputs * (double)k / (med * 1e-3) / 1e9;
    Shape s = shape_for(outputs, k);
    std::printf("| %-26s | %6u x %4u, %6u B | %9.1f | %7.1f .. %7.1f | %8.0f | %5.1f%% |\n", name, s.grid, s.block,
                s.shared, med * 1e3, ms.front() * 1e3, ms.back() * 1e3, gflops, 100.0 * gflops / peak_gflops);
    for (auto p : dx) dev_free(p);
    dev_free(dw);
    dev_free(dout);
}
#endif

int main(int argc, char** argv)
{
#ifdef EMU
    (void)argc;
    std::printf("%s (CPU emulation)\n", argv[0]);
    bool ok = check_all(true);
    std::printf("%s\n", ok ? "all cases pass" : "SOME CASES FAIL");
    return ok ? 0 : 1;
#else
    if (argc == 2 && std::string(argv[1]) == "peak") {
        peak();
        return 0;
    }
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s peak | %s NAME PEAK_GFLOPS\n", argv[0], argv[0]);
        return 2;
    }
    if (!check_all(std::getenv("VERBOSE") != nullptr)) {
        std::printf("| %-26s | wrong results: not timed |\n", argv[1]);
        return 1;
    }
    bench(argv[1], std::atof(argv[2]));
    return 0;
#endif
}
