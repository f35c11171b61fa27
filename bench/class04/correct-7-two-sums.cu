// correct: two partial sums (even and odd taps)
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    extern __shared__ float tile[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * TPB;
    for (int k = threadIdx.x; k < TPB + kernel_size - 1; k += TPB) {
        int g = first + k;
        tile[k] = g < input_size ? input[g] : 0.0f;
    }
    __syncthreads();
    int i = first + threadIdx.x;
    if (i >= output_size) return;
    float even = 0.0f, odd = 0.0f;
    for (int j = 0; j < kernel_size; j += 2) {
        even += tile[threadIdx.x + j] * kernel[j];
        if (j + 1 < kernel_size) odd += tile[threadIdx.x + j + 1] * kernel[j + 1];
    }
    output[i] = even + odd;
}
