// Puzzle 08: as fast as the hardware allows (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// You choose the launch: declare it in this file as
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// Round 4 tuning record (lab/NOTES.md): the solution's two swapping window halves generalized to
// SEG rotating segments of TC floats, TC taps per chunk, SEG chunks per step, NACC accumulator sets,
// MINB blocks per SM in __launch_bounds__. Each variant is this file with its macros defined first.
#ifndef THREADS
#define THREADS 384
#endif
#ifndef PER_THREAD
#define PER_THREAD 30
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef TC
#define TC 6
#endif
#ifndef SEG
#define S ((PER_THREAD + TC - 1 + TC - 1) / TC)
#else
#define S SEG
#endif
#define STEP (S * TC)
static_assert(S * TC >= PER_THREAD + TC - 1, "window too small");
#define OUTPUTS_PER_BLOCK (THREADS * PER_THREAD)
#define MAX_TAPS ((2047 + STEP - 1) / STEP * STEP)
#define TAPS_REGION ((MAX_TAPS + 3) / 4 * 4)
#define X_FLOATS ((OUTPUTS_PER_BLOCK + TAPS_REGION + STEP + 3) / 4 * 4)
#define SHARED_BYTES ((TAPS_REGION + X_FLOATS) * 4)

extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};

#define STAGE_LOADS ((TAPS_REGION + X_FLOATS) / 4 + THREADS - 1) / THREADS
__device__ __forceinline__ void stage(float4* smem, const float* kernel, int kernel_size, int taps,
                                      const float* input, int valid_inputs)
{
    const int n_taps = taps / 4, n_all = n_taps + (OUTPUTS_PER_BLOCK + taps + STEP + 3) / 4;
    float4 q[STAGE_LOADS];
#pragma unroll
    for (int u = 0; u < STAGE_LOADS; u++) {
        int v = threadIdx.x + u * THREADS;
        const float* src = v < n_taps ? kernel + 4 * v : input + 4 * (v - n_taps);
        int valid = v < n_taps ? kernel_size - 4 * v : valid_inputs - 4 * (v - n_taps);
        if (v >= n_all) valid = 0;
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
    for (int u = 0; u < STAGE_LOADS; u++) {
        int v = threadIdx.x + u * THREADS;
        if (v < n_all) smem[v] = q[u];
    }
}

__device__ __forceinline__ void load(float (&v)[TC], const float* src)
{
#if TC % 2 == 0
#pragma unroll
    for (int q = 0; q < TC / 2; q++) {
        float2 f = reinterpret_cast<const float2*>(src)[q];
        v[2 * q] = f.x;
        v[2 * q + 1] = f.y;
    }
#else
#pragma unroll
    for (int q = 0; q < TC; q++) v[q] = src[q];
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    extern __shared__ float4 smem[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * OUTPUTS_PER_BLOCK;
    int taps = (kernel_size + STEP - 1) / STEP * STEP;
    int region = (taps + 3) / 4 * 4;
    stage(smem, kernel, kernel_size, region, input + first, input_size - first);
    __syncthreads();

    const float* w = reinterpret_cast<const float*>(smem);
    const float* mine = w + region + threadIdx.x * PER_THREAD;
#ifndef NACC
#define NACC 1
#endif
    float acc2[NACC][PER_THREAD];
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) for (int a = 0; a < NACC; a++) acc2[a][r] = 0.0f;
    float x[S][TC], wt[S][TC];
#pragma unroll
    for (int s = 0; s < S; s++) load(x[s], mine + s * TC);
    load(wt[0], w);
    for (int c = 0; c < taps; c += STEP) {
#pragma unroll
        for (int k = 0; k < S; k++) {
            load(wt[(k + 1) % S], w + c + (k + 1) * TC);
#pragma unroll
            for (int jj = 0; jj < TC; jj++) {
#pragma unroll
                for (int r = 0; r < PER_THREAD; r++) {
                    int i = r + jj;
                    acc2[jj % NACC][r] = fmaf(x[(k + i / TC) % S][i % TC], wt[k][jj], acc2[jj % NACC][r]);
                }
            }
            load(x[k], mine + c + (k + S) * TC);
        }
    }

    float acc[PER_THREAD];
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) { acc[r] = acc2[0][r]; for (int a = 1; a < NACC; a++) acc[r] += acc2[a][r]; }
    int o = first + threadIdx.x * PER_THREAD;
    if (o + PER_THREAD <= output_size) {
#pragma unroll
        for (int q = 0; q < PER_THREAD / 2; q++) {
            reinterpret_cast<float2*>(output + o)[q] = make_float2(acc[2 * q], acc[2 * q + 1]);
        }
    } else {
#pragma unroll
        for (int r = 0; r < PER_THREAD; r++) {
            if (o + r < output_size) output[o + r] = acc[r];
        }
    }
}
