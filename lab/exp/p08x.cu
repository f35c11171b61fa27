// Experimental puzzle-08 kernel for tuning (not the teaching solution): knobs as macros.
//   PER_THREAD (R) outputs per thread, THREADS per block, VEC floats per input load (2 or 4),
//   SPLIT 2: even/odd accumulators, 1: one; PF 1: load the next chunk's inputs and taps one chunk early;
//   STAGE_U: staging loads per thread issued before their stores.
#ifndef THREADS
#define THREADS 160
#endif
#ifndef PER_THREAD
#define PER_THREAD 12
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef SPLIT
#define SPLIT 2
#endif
#ifndef STAGE_U
#define STAGE_U 4
#endif
#ifndef TAPVEC
#define TAPVEC 4
#endif
#ifndef ORDER
#define ORDER 0
#endif
#ifndef MINB
#define MINB 1
#endif
#define R PER_THREAD
#define OUTPUTS_PER_BLOCK (THREADS * R)
#define RUP(a, b) (((a) + (b) - 1) / (b) * (b))
#ifndef TAIL
#define TAIL 0
#endif
#define TAPQ (TAIL ? R : 2 * R)
#define MAX_TAPS RUP(RUP(2047, TAPQ), 4)
#define SHARED_BYTES ((MAX_TAPS + RUP(OUTPUTS_PER_BLOCK + MAX_TAPS, 4) + 2 * R) * 4)

extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};

__device__ __forceinline__ void stage(float4* dst, const float* src, int n, int valid)
{
    for (int v0 = threadIdx.x; v0 < n / 4; v0 += THREADS * (STAGE_U ? STAGE_U : 1)) {
        float4 q[STAGE_U ? STAGE_U : 1];
#pragma unroll
        for (int u = 0; u < (STAGE_U ? STAGE_U : 1); u++) {
            int g = 4 * (v0 + u * THREADS);
            if (g + 3 < valid) {
                q[u] = *reinterpret_cast<const float4*>(src + g);
            } else {
                q[u].x = g < valid ? src[g] : 0.0f;
                q[u].y = g + 1 < valid ? src[g + 1] : 0.0f;
                q[u].z = g + 2 < valid ? src[g + 2] : 0.0f;
                q[u].w = g + 3 < valid ? src[g + 3] : 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < (STAGE_U ? STAGE_U : 1); u++) {
            if (v0 + u * THREADS < n / 4) dst[v0 + u * THREADS] = q[u];
        }
    }
}

// n floats from p (p's offset in floats is MOD mod 4): widest aligned loads.
template <int N, int MOD>
__device__ __forceinline__ void loadv(float (&v)[N], const float* p)
{
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int m = (MOD + i) % 4, g4 = i - m, g2 = i - m % 2;
        if (g4 >= 0 && g4 + 4 <= N && (VEC == 4 || MOD == -1)) {
            if (i == g4) {
                float4 f = *reinterpret_cast<const float4*>(p + i);
                v[i] = f.x;
                v[(i + 1) % N] = f.y;
                v[(i + 2) % N] = f.z;
                v[(i + 3) % N] = f.w;
            }
        } else if (g2 >= 0 && g2 + 2 <= N) {
            if (i == g2) {
                float2 f = *reinterpret_cast<const float2*>(p + i);
                v[i] = f.x;
                v[(i + 1) % N] = f.y;
            }
        } else {
            v[i] = p[i];
        }
    }
}
// Taps: always as wide as alignment allows (broadcast reads).
template <int N, int MOD>
__device__ __forceinline__ void loadw(float (&v)[N], const float* p)
{
#if TAPVEC == 2
    loadv<N, MOD>(v, p);
    return;
#endif
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int m = (MOD + i) % 4, g4 = i - m, g2 = i - m % 2;
        if (g4 >= 0 && g4 + 4 <= N) {
            if (i == g4) {
                float4 f = *reinterpret_cast<const float4*>(p + i);
                v[i] = f.x;
                v[(i + 1) % N] = f.y;
                v[(i + 2) % N] = f.z;
                v[(i + 3) % N] = f.w;
            }
        } else if (g2 >= 0 && g2 + 2 <= N) {
            if (i == g2) {
                float2 f = *reinterpret_cast<const float2*>(p + i);
                v[i] = f.x;
                v[(i + 1) % N] = f.y;
            }
        } else {
            v[i] = p[i];
        }
    }
}

__device__ __forceinline__ void chunk(float (&acc)[SPLIT][R], const float (&lo)[R], const float (&hi)[R],
                                      const float (&w)[R])
{
#if ORDER == 0
#pragma unroll
    for (int jj = 0; jj < R; jj++) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            float x = r + jj < R ? lo[r + jj] : hi[r + jj - R];
            acc[jj % SPLIT][r] = fmaf(x, w[jj], acc[jj % SPLIT][r]);
        }
    }
#else
#pragma unroll
    for (int m = 0; m < 2 * R - 1; m++) {
        float x = m < R ? lo[m] : hi[m - R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int jj = m - r;
            if (jj >= 0 && jj < R) acc[jj % SPLIT][r] = fmaf(x, w[jj], acc[jj % SPLIT][r]);
        }
    }
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    extern __shared__ float4 smem[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * OUTPUTS_PER_BLOCK;
    int taps = RUP(kernel_size, TAPQ);
    int tapsp = RUP(taps, 4);
    float4* w4 = smem;
    float4* x4 = smem + tapsp / 4;
#if STAGE_U == 0
    {
        // taps and inputs together: every load of this thread issued before its first store
        const int nw = tapsp / 4, nx = RUP(OUTPUTS_PER_BLOCK + taps, 4) / 4;
        const int U = (MAX_TAPS / 4 + RUP(OUTPUTS_PER_BLOCK + MAX_TAPS, 4) / 4 + THREADS - 1) / THREADS;
        float4 q[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            int v = threadIdx.x + u * THREADS;
            const float* src = v < nw ? kernel + 4 * v : input + first + 4 * (v - nw);
            int valid = v < nw ? kernel_size - 4 * v : input_size - first - 4 * (v - nw);
            if (v >= nw + nx) valid = 0;
            if (valid >= 4) {
                q[u] = *reinterpret_cast<const float4*>(src);
            } else {
                q[u].x = valid > 0 ? src[0] : 0.0f;
                q[u].y = valid > 1 ? src[1] : 0.0f;
                q[u].z = valid > 2 ? src[2] : 0.0f;
                q[u].w = 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            int v = threadIdx.x + u * THREADS;
            if (v < nw + nx) smem[v] = q[u];
        }
    }
#else
    stage(w4, kernel, tapsp, kernel_size);
    stage(x4, input + first, RUP(OUTPUTS_PER_BLOCK + taps, 4), input_size - first);
#endif
    __syncthreads();
    const float* w = reinterpret_cast<const float*>(w4);
    const float* mine = reinterpret_cast<const float*>(x4) + threadIdx.x * R;

    float acc[SPLIT][R];
#pragma unroll
    for (int s = 0; s < SPLIT; s++)
#pragma unroll
        for (int r = 0; r < R; r++) acc[s][r] = 0.0f;
    float a[R], b[R], wa[R], wb[R];
    loadv<R, 0>(a, mine);
#if PF
    loadv<R, R % 4>(b, mine + R);
    loadw<R, 0>(wa, w);
    int c = 0;
    for (; c + 2 * R <= taps; c += 2 * R) {
        loadw<R, R % 4>(wb, w + c + R);
        chunk(acc, a, b, wa);
        loadv<R, 0>(a, mine + c + 2 * R);
        loadw<R, 0>(wa, w + c + 2 * R);
        chunk(acc, b, a, wb);
        loadv<R, R % 4>(b, mine + c + 3 * R);
    }
    if (TAIL && c < taps) chunk(acc, a, b, wa);
#else
    int c = 0;
    for (; c + 2 * R <= taps; c += 2 * R) {
        loadv<R, R % 4>(b, mine + c + R);
        loadw<R, 0>(wa, w + c);
        chunk(acc, a, b, wa);
        loadv<R, 0>(a, mine + c + 2 * R);
        loadw<R, R % 4>(wb, w + c + R);
        chunk(acc, b, a, wb);
    }
    if (TAIL && c < taps) {
        loadv<R, R % 4>(b, mine + c + R);
        loadw<R, 0>(wa, w + c);
        chunk(acc, a, b, wa);
    }
#endif
#pragma unroll
    for (int s = 1; s < SPLIT; s++)
#pragma unroll
        for (int r = 0; r < R; r++) acc[0][r] += acc[s][r];

    int o = first + threadIdx.x * R;
#pragma unroll
    for (int r = 0; r < R; r++) {
        if (o + r < output_size) output[o + r] = acc[0][r];
    }
}
