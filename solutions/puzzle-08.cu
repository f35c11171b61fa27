// Puzzle 08: as fast as the hardware allows (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// You choose the launch: declare it in this file as
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// ANCHOR: solve
// ANCHOR: shape
// Each thread computes PER_THREAD neighbouring outputs, a block THREADS * PER_THREAD of them.
// PER_THREAD is a multiple of 4 (float4 reads) and PER_THREAD / 4 is odd: thread t reads shared
// memory from float t * PER_THREAD on, and for 12 or 20 the eight threads of a quarter-warp then
// cover the 32 banks exactly once (no bank conflicts).
#ifndef THREADS
#define THREADS 160
#endif
#ifndef PER_THREAD
#define PER_THREAD 12
#endif
#define OUTPUTS_PER_BLOCK (THREADS * PER_THREAD)
// Taps are walked 2 * PER_THREAD at a time, so the kernel is zero-padded to a multiple of that.
#define MAX_TAPS ((2047 + 2 * PER_THREAD - 1) / (2 * PER_THREAD) * (2 * PER_THREAD))
// Shared memory: the padded taps, then the block's inputs (OUTPUTS_PER_BLOCK + padded taps).
#define SHARED_BYTES ((MAX_TAPS + OUTPUTS_PER_BLOCK + MAX_TAPS) * 4)

extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// ANCHOR_END: shape

// Copies n floats from global memory (zeros past `valid`) into shared memory, four at a time.
// n is a multiple of 4; src is 16-byte aligned where src[0] is (cudaMalloc'd buffers, offsets of 4k).
__device__ __forceinline__ void stage(float4* dst, const float* src, int n, int valid)
{
    for (int v = threadIdx.x; v < n / 4; v += THREADS) {
        int g = 4 * v;
        float4 q;
        if (g + 3 < valid) {
            q = *reinterpret_cast<const float4*>(src + g);
        } else {
            q.x = g < valid ? src[g] : 0.0f;
            q.y = g + 1 < valid ? src[g + 1] : 0.0f;
            q.z = g + 2 < valid ? src[g + 2] : 0.0f;
            q.w = g + 3 < valid ? src[g + 3] : 0.0f;
        }
        dst[v] = q;
    }
}

// ANCHOR: chunk
// P = PER_THREAD taps w[0..P) against the window x = lo[0..P) ++ hi[0..P):
// acc[r] += x[r + jj] * w[jj]. Every index is a constant after unrolling, so the window never
// moves: P * P FMAs for P / 4 broadcast float4 reads of taps (and the caller's P / 4 of inputs).
// Even and odd taps add into separate accumulators: x[r + jj] comes from a float4 load, so its
// register alternates between the two register banks as r + jj does; with one accumulator per
// parity the compiler can always put the accumulator in the other bank (measured: +3 points).
__device__ __forceinline__ void chunk(float (&acc)[2][PER_THREAD], const float (&lo)[PER_THREAD],
                                      const float (&hi)[PER_THREAD], const float4* w)
{
#pragma unroll
    for (int q = 0; q < PER_THREAD / 4; q++) {
        float4 w4 = w[q];
        float taps[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int jj = 4 * q + u;
#pragma unroll
            for (int r = 0; r < PER_THREAD; r++) {
                float x = r + jj < PER_THREAD ? lo[r + jj] : hi[r + jj - PER_THREAD];
                acc[jj & 1][r] = fmaf(x, taps[u], acc[jj & 1][r]);
            }
        }
    }
}
// ANCHOR_END: chunk

__device__ __forceinline__ void load(float (&v)[PER_THREAD], const float4* src)
{
#pragma unroll
    for (int q = 0; q < PER_THREAD / 4; q++) {
        float4 f = src[q];
        v[4 * q] = f.x;
        v[4 * q + 1] = f.y;
        v[4 * q + 2] = f.z;
        v[4 * q + 3] = f.w;
    }
}

// ANCHOR: signature
extern "C" __global__ void __launch_bounds__(THREADS)
    conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
// ANCHOR_END: signature
{
    extern __shared__ float4 smem[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * OUTPUTS_PER_BLOCK;
    int taps = (kernel_size + 2 * PER_THREAD - 1) / (2 * PER_THREAD) * (2 * PER_THREAD);  // zero-padded
    float4* w = smem;                                           // taps / 4 float4
    float4* x = smem + taps / 4;                                // (OUTPUTS_PER_BLOCK + taps) / 4 float4
    stage(w, kernel, taps, kernel_size);
    stage(x, input + first, OUTPUTS_PER_BLOCK + taps, input_size - first);
    __syncthreads();

    // ANCHOR: loop
    float acc[2][PER_THREAD];
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) {
        acc[0][r] = 0.0f;
        acc[1][r] = 0.0f;
    }
    const float4* mine = x + threadIdx.x * (PER_THREAD / 4);  // inputs from this thread's first output on
    float a[PER_THREAD], b[PER_THREAD];
    load(a, mine);
    // Two chunks per step, the halves of the window swapping roles: no copies between registers.
    for (int c = 0; c < taps; c += 2 * PER_THREAD) {
        load(b, mine + (c + PER_THREAD) / 4);
        chunk(acc, a, b, w + c / 4);
        load(a, mine + (c + 2 * PER_THREAD) / 4);
        chunk(acc, b, a, w + (c + PER_THREAD) / 4);
    }
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) {
        acc[0][r] += acc[1][r];
    }
    // ANCHOR_END: loop

    int o = first + threadIdx.x * PER_THREAD;
    if (o + PER_THREAD <= output_size) {
#pragma unroll
        for (int q = 0; q < PER_THREAD / 4; q++) {
            float4 out4 = make_float4(acc[0][4 * q], acc[0][4 * q + 1], acc[0][4 * q + 2], acc[0][4 * q + 3]);
            reinterpret_cast<float4*>(output + o)[q] = out4;
        }
    } else {
#pragma unroll
        for (int r = 0; r < PER_THREAD; r++) {
            if (o + r < output_size) {
                output[o + r] = acc[0][r];
            }
        }
    }
}
// ANCHOR_END: solve
