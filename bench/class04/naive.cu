// correct, from global memory only
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= input_size - kernel_size + 1) return;
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; j++) sum += input[i + j] * kernel[j];
    output[i] = sum;
}
