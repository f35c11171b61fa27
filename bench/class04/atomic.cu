// wrong: adds each product into the output, which the runner does not zero
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= input_size - kernel_size + 1) return;
    for (int j = 0; j < kernel_size; j++) atomicAdd(&output[i], input[i + j] * kernel[j]);
}
