// Puzzle 06: register blocking (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// Each block of TPB threads computes TPB * OUTPUTS_PER_THREAD neighbouring outputs:
// ceil(output_size / (TPB * OUTPUTS_PER_THREAD)) blocks, and TPB * OUTPUTS_PER_THREAD + kernel_size - 1
// floats of dynamic shared memory. Thread t owns outputs t * OUTPUTS_PER_THREAD + r of its block,
// r < OUTPUTS_PER_THREAD. The runner fills c_kernel (as in puzzle 05) and defines TPB and
// OUTPUTS_PER_THREAD.

__constant__ float c_kernel[2048];

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    // Your code here: load the block's tile, then let each thread slide a window of
    // OUTPUTS_PER_THREAD inputs along it, one shared read per OUTPUTS_PER_THREAD multiply-adds.
    // ANCHOR_END: solve
}
