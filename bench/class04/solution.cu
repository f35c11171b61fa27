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
    // ANCHOR: tile
    // The block's TPB inputs and the kernel_size - 1 after them: sized at launch, not compile time.
    extern __shared__ float tile[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * TPB;  // the block's first output is also its tile's first input
    int tile_size = TPB + kernel_size - 1;
    // Thread t loads tile[t], tile[t + TPB], ...: at every step neighbouring threads read
    // neighbouring inputs (coalesced), however long the halo is.
    for (int k = threadIdx.x; k < tile_size; k += TPB) {
        int g = first + k;
        tile[k] = g < input_size ? input[g] : 0.0f;
    }
    __syncthreads();
    // ANCHOR_END: tile
    int i = first + threadIdx.x;
    if (i >= output_size) {
        return;
    }
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; j++) {
        sum += tile[threadIdx.x + j] * kernel[j];
    }
    output[i] = sum;
    // ANCHOR_END: solve
}
