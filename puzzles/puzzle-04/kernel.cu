// Puzzle 04: tiles of any size (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// ceil(output_size / TPB) blocks of TPB threads, and TPB + kernel_size - 1 floats of dynamic shared
// memory. kernel_size may be larger than TPB. The runner defines TPB.

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    // Your code here: load the block's tile of TPB + kernel_size - 1 inputs into dynamic shared
    // memory with a strided loop, wait, then sum kernel_size products per output.
    // ANCHOR_END: solve
}
