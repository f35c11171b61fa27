// correct: the pointer walked instead of indexed
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
    const float* x = tile + threadIdx.x;
    float sum = 0.0f;
    for (const float* k = kernel; k < kernel + kernel_size; k++, x++) sum += *x * *k;
    output[i] = sum;
}
