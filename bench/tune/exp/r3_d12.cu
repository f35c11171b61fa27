// Puzzle 08: as fast as the hardware allows (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// You choose the launch: declare it in this file as
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// ANCHOR: solve
// ANCHOR: shape
// Each thread computes PER_THREAD neighbouring outputs; a block of THREADS threads computes
// THREADS * PER_THREAD of them. The numbers come from the H100's scheduling (bench/NOTES.md):
// - An SM runs its warps on four sub-partitions (SMSPs), warp w on SMSP w % 4, each issuing one
//   instruction per cycle; the kernel takes as long as the busiest SMSP. 640 threads are 20 warps,
//   5 per SMSP, and 640 * 18 = 11,520 outputs per block make 131 blocks for the full case (1,498,954
//   outputs), one per SM: every SMSP gets 5 * 32 * 18 = 2,880 outputs, 1.4% over an even share.
//   (With 12 outputs per thread the busiest SMSP had 3,072.)
// - PER_THREAD is even, so every input read can be a float2: thread t starts at float 18 t, and the
//   16 threads served by one shared-memory wavefront then cover the 32 banks exactly once.
#ifndef THREADS
#define THREADS 640
#endif
#ifndef PER_THREAD
#define PER_THREAD 18
#endif
#define OUTPUTS_PER_BLOCK (THREADS * PER_THREAD)
#ifndef TAPS
#define TAPS 12
#endif
// Taps are walked 2 * PER_THREAD at a time, so the kernel is zero-padded to a multiple of that.
#define MAX_TAPS ((2047 + 2 * PER_THREAD - 1) / (2 * PER_THREAD) * (2 * PER_THREAD))
// The block's inputs: its outputs plus the padded taps, plus PER_THREAD for the last read-ahead.
#define X_FLOATS ((OUTPUTS_PER_BLOCK + MAX_TAPS + PER_THREAD + 3) / 4 * 4)
// Shared memory: the padded taps, then the block's inputs.
#define SHARED_BYTES ((MAX_TAPS + X_FLOATS) * 4)

extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// ANCHOR_END: shape

// Copies the taps (zero-padded to `taps`) and the block's inputs (zeros past the end) into
// shared memory as float4s. Every load of a thread is issued before its first store, so the block
// waits for global memory once rather than once per float4.
// src offsets are multiples of 4 floats: cudaMalloc'd buffers, OUTPUTS_PER_BLOCK % 4 == 0.
#define STAGE_LOADS ((MAX_TAPS + X_FLOATS) / 4 + THREADS - 1) / THREADS
__device__ __forceinline__ void stage(float4* smem, const float* kernel, int kernel_size, int taps,
                                      const float* input, int valid_inputs)
{
    const int n_taps = taps / 4, n_all = n_taps + (OUTPUTS_PER_BLOCK + taps + PER_THREAD + 3) / 4;
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

// Reads PER_THREAD floats from shared memory, two at a time.
template <int N>
__device__ __forceinline__ void load(float (&v)[N], const float* src)
{
#pragma unroll
    for (int q = 0; q < N / 2; q++) {
        float2 f = reinterpret_cast<const float2*>(src)[q];
        v[2 * q] = f.x;
        v[2 * q + 1] = f.y;
    }
}

// ANCHOR: chunk
// TAPS taps w[0..TAPS) against the window x = s0 ++ s1 ++ s2 (three segments of TAPS inputs):
// acc[r] += x[r + jj] * w[jj]. Every index is a constant after unrolling.
__device__ __forceinline__ void chunk(float (&acc)[2][PER_THREAD], const float (&s0)[TAPS],
                                      const float (&s1)[TAPS], const float (&s2)[TAPS],
                                      const float (&w)[TAPS])
{
#pragma unroll
    for (int i = 0; i < PER_THREAD + TAPS - 1; i++) {
#pragma unroll
        for (int jj = 0; jj < TAPS; jj++) {
            int r = i - jj;
            if (r < 0 || r >= PER_THREAD) continue;
            float x = i < TAPS ? s0[i] : i < 2 * TAPS ? s1[i - TAPS] : s2[i - 2 * TAPS];
            acc[jj & 1][r] = fmaf(x, w[jj], acc[jj & 1][r]);
        }
    }
}
// ANCHOR_END: chunk

// ANCHOR: signature
extern "C" __global__ void __launch_bounds__(THREADS)
    conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
// ANCHOR_END: signature
{
    extern __shared__ float4 smem[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * OUTPUTS_PER_BLOCK;
    int taps = (kernel_size + 2 * PER_THREAD - 1) / (2 * PER_THREAD) * (2 * PER_THREAD);  // zero-padded
    stage(smem, kernel, kernel_size, taps, input + first, input_size - first);
    __syncthreads();

    // ANCHOR: loop
    const float* w = reinterpret_cast<const float*>(smem);                          // taps floats
    const float* mine = w + taps + threadIdx.x * PER_THREAD;  // inputs from this thread's first output on
    float acc[2][PER_THREAD];
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) {
        acc[0][r] = 0.0f;
        acc[1][r] = 0.0f;
    }
    // Two chunks per step, the halves of the window swapping roles: no copies between registers.
    // Every load is issued one chunk before the chunk that uses it, so the FFMAs never wait for
    // shared memory (the last step reads one chunk past the end: staged, unused).
    // Three chunks of TAPS taps per step (3 * TAPS == 2 * PER_THREAD), the segments rotating.
    float s0[TAPS], s1[TAPS], s2[TAPS], w0[TAPS], w1[TAPS], w2[TAPS];
    load(s0, mine);
    load(s1, mine + TAPS);
    load(s2, mine + 2 * TAPS);
    load(w0, w);
    for (int c = 0; c < taps; c += 3 * TAPS) {
        load(w1, w + c + TAPS);
        chunk(acc, s0, s1, s2, w0);
        load(s0, mine + c + 3 * TAPS);
        load(w2, w + c + 2 * TAPS);
        chunk(acc, s1, s2, s0, w1);
        load(s1, mine + c + 4 * TAPS);
        load(w0, w + c + 3 * TAPS);
        chunk(acc, s2, s0, s1, w2);
        load(s2, mine + c + 5 * TAPS);
    }
#pragma unroll
    for (int r = 0; r < PER_THREAD; r++) {
        acc[0][r] += acc[1][r];
    }
    // ANCHOR_END: loop

    int o = first + threadIdx.x * PER_THREAD;
    if (o + PER_THREAD <= output_size) {
#pragma unroll
        for (int q = 0; q < PER_THREAD / 2; q++) {
            reinterpret_cast<float2*>(output + o)[q] = make_float2(acc[0][2 * q], acc[0][2 * q + 1]);
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
