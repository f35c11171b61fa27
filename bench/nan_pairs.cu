// Which NaN an f64 operation gives when several operands are NaN (issue 16's fuzzing found the
// simulator's rule, "the larger significand", wrong for some pairs): for 4096 pairs (a, b) and
// a third NaN c, the bits of add, sub, mul, div, fma in each operand order, min and max, written
// raw to nan_pairs.bin (input words first, then results), for kernels/sim/src/gpu_facts.rs.
// Run on a GPU machine: nvcc -arch=sm_90 -o nan_pairs bench/nan_pairs.cu && ./nan_pairs DIR
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N 4096
#define OPS 12

__device__ double D(unsigned long long b) { return __longlong_as_double((long long)b); }
__device__ unsigned long long B(double d) { return (unsigned long long)__double_as_longlong(d); }

__global__ void k(const unsigned long long* in, unsigned long long* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) {
        return;
    }
    double a = D(in[3 * i]), b = D(in[3 * i + 1]), c = D(in[3 * i + 2]), one = D(in[3 * N]);
    unsigned long long* o = out + OPS * i;
    o[0] = B(a + b);
    o[1] = B(a - b);
    o[2] = B(a * b);
    o[3] = B(a / b);
    o[4] = B(fma(a, b, one));
    o[5] = B(fma(one, a, b));
    o[6] = B(fma(a, one, b));
    o[7] = B(fma(a, b, c));
    o[8] = B(fmin(a, b));
    o[9] = B(fmax(a, b));
    o[10] = B(__dsub_rd(a, b));
    o[11] = B(-a);
}

static unsigned long long next(unsigned long long* s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

// A NaN: sign, quiet bit, and a payload whose high and low halves are drawn so that equal high
// words, equal low words and near values all occur.
static unsigned long long nan(unsigned long long* s, unsigned long long like)
{
    unsigned long long r = next(s);
    unsigned long long hi = (r >> 8) & 0x7ffff, lo = next(s) & 0xffffffffull;
    switch (r & 7) {
    case 0: hi = (like >> 32) & 0x7ffff; break;            // same top payload as `like`
    case 1: lo = like & 0xffffffffull; break;               // same low word
    case 2: hi = (like >> 32) & 0x7ffff; lo ^= 1; break;    // near
    case 3: hi = 0; break;                                  // payload in the low word only
    default: break;
    }
    unsigned long long sign = (r >> 4) & 1, quiet = (r >> 5) & 1;
    unsigned long long bits = sign << 63 | 0x7ff0000000000000ull | quiet << 51 | hi << 32 | lo;
    if ((bits & 0x000fffffffffffffull) == 0) {
        bits |= 1; // not an infinity
    }
    return bits;
}

int main(int argc, char** argv)
{
    static unsigned long long h[3 * N + 1], res[OPS * N];
    unsigned long long s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N; i++) {
        h[3 * i] = nan(&s, 0);
        h[3 * i + 1] = nan(&s, h[3 * i]);
        h[3 * i + 2] = nan(&s, h[3 * i + 1]);
        if (i % 8 == 7) {
            h[3 * i + 1] = 0x3ff8000000000000ull; // one NaN operand alone, against 1.5
        }
    }
    h[3 * N] = 0x3ff0000000000000ull;
    unsigned long long *din, *dout;
    if (cudaMalloc(&din, sizeof h) || cudaMalloc(&dout, sizeof res) ||
        cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice)) {
        printf("cuda setup failed\n");
        return 1;
    }
    k<<<N / 128, 128>>>(din, dout);
    if (cudaDeviceSynchronize() || cudaMemcpy(res, dout, sizeof res, cudaMemcpyDeviceToHost)) {
        printf("launch failed\n");
        return 1;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/nan_pairs.bin", argc > 1 ? argv[1] : ".");
    FILE* f = fopen(path, "wb");
    fwrite(h, sizeof h, 1, f);
    fwrite(res, sizeof res, 1, f);
    fclose(f);
    printf("nan_pairs: %d pairs, %d results each, written to %s\n", N, OPS, path);
    return 0;
}
