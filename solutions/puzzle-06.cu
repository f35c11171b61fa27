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
    extern __shared__ float tile[];
    const int per_block = TPB * OUTPUTS_PER_THREAD;
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * per_block;
    int tile_size = per_block + kernel_size - 1;
    for (int k = threadIdx.x; k < tile_size; k += TPB) {
        int g = first + k;
        tile[k] = g < input_size ? input[g] : 0.0f;
    }
    __syncthreads();

    // ANCHOR: window
    const int R = OUTPUTS_PER_THREAD;  // a constant, so the unroll pragma below can read it
    // This thread's inputs: its R outputs need x[0 .. R + kernel_size - 1).
    const float* x = tile + threadIdx.x * R;
    float acc[R];
    float window[R];  // window[r] == x[j + r] during step j
#pragma unroll
    for (int r = 0; r < R; r++) {
        acc[r] = 0.0f;
        window[r] = r + 1 < R ? x[r] : 0.0f;
    }
    // Unrolled R times, the slide at the bottom becomes a renaming of registers: no copies.
#pragma unroll R
    for (int j = 0; j < kernel_size; j++) {
        window[R - 1] = x[j + R - 1];  // the one new input of this step
        float w = c_kernel[j];         // the same for every thread
#pragma unroll
        for (int r = 0; r < R; r++) {
            acc[r] += window[r] * w;  // R multiply-adds per shared read
        }
#pragma unroll
        for (int r = 0; r + 1 < R; r++) {
            window[r] = window[r + 1];
        }
    }
    // ANCHOR_END: window
    int mine = first + threadIdx.x * R;
#pragma unroll
    for (int r = 0; r < R; r++) {
        if (mine + r < output_size) {
            output[mine + r] = acc[r];
        }
    }
    // ANCHOR_END: solve
}
