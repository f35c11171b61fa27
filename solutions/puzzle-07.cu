// Puzzle 07: Triton-style broadcast tiles (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// A block (Triton's program) owns BLOCK_SIZE outputs: ceil(output_size / BLOCK_SIZE) blocks of
// THREADS threads, no shared memory. It walks the kernel K_BLOCK taps at a time. Thread t holds the
// rows t, t + THREADS, ... of the program's BLOCK_SIZE x K_BLOCK index grid. The runner defines
// BLOCK_SIZE, K_BLOCK and THREADS (BLOCK_SIZE is a multiple of THREADS).

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    const int ROWS = BLOCK_SIZE / THREADS;  // this thread's share of offs_o
    int output_size = input_size - kernel_size + 1;
    int pid = blockIdx.x;  // pid = tl.program_id(0)
    // ANCHOR: offsets
    // offs_o = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE); mask_o = offs_o < output_size
    int offs_o[ROWS];
    bool mask_o[ROWS];
    float acc[ROWS];  // acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
#pragma unroll
    for (int m = 0; m < ROWS; m++) {
        offs_o[m] = pid * BLOCK_SIZE + m * THREADS + threadIdx.x;
        mask_o[m] = offs_o[m] < output_size;
        acc[m] = 0.0f;
    }
    // ANCHOR_END: offsets
    for (int k0 = 0; k0 < kernel_size; k0 += K_BLOCK) {
        // ANCHOR: broadcast
        // offs_k = k0 + tl.arange(0, K_BLOCK); w = tl.load(kernel_ptr + offs_k, mask=mask_k, other=0.0)
        float w[K_BLOCK];
#pragma unroll
        for (int kk = 0; kk < K_BLOCK; kk++) {
            int offs_k = k0 + kk;
            w[kk] = offs_k < kernel_size ? kernel[offs_k] : 0.0f;
        }
        // idx = offs_o[:, None] + offs_k[None, :], masked by mask_o[:, None] & mask_k[None, :]
        // acc += tl.sum(x * w[None, :], axis=1)
#pragma unroll
        for (int m = 0; m < ROWS; m++) {
            float row = 0.0f;
#pragma unroll
            for (int kk = 0; kk < K_BLOCK; kk++) {
                int offs_k = k0 + kk;
                bool mask = mask_o[m] && offs_k < kernel_size;
                float x = mask ? input[offs_o[m] + offs_k] : 0.0f;
                row += x * w[kk];
            }
            acc[m] += row;
        }
        // ANCHOR_END: broadcast
    }
    // tl.store(output_ptr + offs_o, acc, mask=mask_o)
#pragma unroll
    for (int m = 0; m < ROWS; m++) {
        if (mask_o[m]) {
            output[offs_o[m]] = acc[m];
        }
    }
    // ANCHOR_END: solve
}
