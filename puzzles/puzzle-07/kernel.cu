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
    // Your code here: the Triton program of the chapter, translated: offs_o, the K_BLOCK loop,
    // the masked broadcast loads, the row sums, the masked store.
    // ANCHOR_END: solve
}
