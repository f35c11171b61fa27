// A naive kernel for the valid contract (puzzles 04 to 08): one thread per output, every input
// and tap read from global memory, no shared tile. bench/profile_vs_ncu.py profiles and times it
// beside the solutions (it passes every case of puzzle 04; the launch's shared memory goes unused).
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= input_size - kernel_size + 1) {
        return;
    }
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; j++) {
        sum += input[i + j] * kernel[j];
    }
    output[i] = sum;
}
