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
// THREADS * PER_THREAD of them. The numbers come from the H100's scheduling (lab/NOTES.md):
// - An SM runs its warps on four sub-partitions (SMSPs), warp w on SMSP w % 4, each issuing one
//   instruction per cycle; the kernel takes as long as the busiest SMSP. 640 threads are 20 warps,
//   5 per SMSP, and 640 * 18 = 11,520 outputs per block make 131 blocks for the full case (1,497,954
//   outputs), one per SM: every SMSP gets 5 * 32 * 18 = 2,880 outputs, 1.5% over an even share.
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
__device__ __forceinline__ void load(float (&v)[PER_THREAD], const float* src)
{
#pragma unroll
    for (int q = 0; q < PER_THREAD / 2; q++) {
        float2 f = reinterpret_cast<const float2*>(src)[q];
        v[2 * q] = f.x;
        v[2 * q + 1] = f.y;
    }
}

// ANCHOR: chunk
// P = PER_THREAD taps w[0..P) against the window x = lo[0..P) ++ hi[0..P):
// acc[r] += x[r + jj] * w[jj]. Every index is a constant after unrolling, so the window never
// moves: P * P FFMAs and no other instruction.
// What limits an FFMA stream here is the register file: it has two banks (even and odd register
// numbers), and an FFMA that must read two of its operands from one bank loses a cycle. Two things
// keep the reads apart:
// - the taps are the same for every thread and arrive a whole chunk early (see the loop), so the
//   compiler keeps them in uniform registers (one copy per warp, `FFMA R, R, UR, R`): an FFMA then
//   reads only x and the accumulator from the register file, and x comes from the operand reuse
//   cache when consecutive FFMAs share it;
// - even and odd taps add into separate accumulators, which gives the register allocator room to
//   put each accumulator in the other bank than the window values it meets.
__device__ __forceinline__ void chunk(float (&acc)[2][PER_THREAD], const float (&lo)[PER_THREAD],
                                      const float (&hi)[PER_THREAD], const float (&w)[PER_THREAD])
{
#pragma unroll
    for (int jj = 0; jj < PER_THREAD; jj++) {
#pragma unroll
        for (int r = 0; r < PER_THREAD; r++) {
            float x = r + jj < PER_THREAD ? lo[r + jj] : hi[r + jj - PER_THREAD];
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
    float a[PER_THREAD], b[PER_THREAD], wa[PER_THREAD], wb[PER_THREAD];
    load(a, mine);
    load(b, mine + PER_THREAD);
    load(wa, w);
    for (int c = 0; c < taps; c += 2 * PER_THREAD) {
        load(wb, w + c + PER_THREAD);
        chunk(acc, a, b, wa);
        load(a, mine + c + 2 * PER_THREAD);
        load(wa, w + c + 2 * PER_THREAD);
        chunk(acc, b, a, wb);
        load(b, mine + c + 3 * PER_THREAD);
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
