// Puzzle 05: the kernel in constant memory (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// ceil(output_size / TPB) blocks of TPB threads, TPB + kernel_size - 1 floats of dynamic shared
// memory. Before the launch the runner copies the kernel into c_kernel (kernel_size <= 2047), so
// `kernel` is there too but need not be read. The runner defines TPB.

// ANCHOR: constant
// Filled by the runner before the launch: c_kernel[j] == kernel[j] for j < kernel_size.
__constant__ float c_kernel[2048];
// ANCHOR_END: constant

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    extern __shared__ float tile[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * TPB;
    int tile_size = TPB + kernel_size - 1;
    for (int k = threadIdx.x; k < tile_size; k += TPB) {
        int g = first + k;
        tile[k] = g < input_size ? input[g] : 0.0f;
    }
    __syncthreads();
    int i = first + threadIdx.x;
    if (i >= output_size) {
        return;
    }
    // ANCHOR: sum
    // Every thread of a warp reads the same c_kernel[j] at the same time: one read, broadcast.
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; j++) {
        sum += tile[threadIdx.x + j] * c_kernel[j];
    }
    // ANCHOR_END: sum
    output[i] = sum;
    // ANCHOR_END: solve
}
