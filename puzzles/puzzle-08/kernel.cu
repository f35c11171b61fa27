// Puzzle 08: as fast as the hardware allows (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// You choose the launch: declare it in this file as
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// ANCHOR: solve
// Your code here: choose the shape, declare it, and write the kernel. This start compiles and
// launches (256 threads, 256 outputs per block, no shared memory) but computes nothing yet.
extern "C" __device__ const int launch_shape[3] = {256, 256, 0};

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
// ANCHOR_END: signature
{
}
// ANCHOR_END: solve
