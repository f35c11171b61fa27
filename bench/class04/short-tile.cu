// wrong: the tile holds the block's TPB inputs only, not the halo after them
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    extern __shared__ float tile[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * TPB;
    int g = first + threadIdx.x;
    tile[threadIdx.x] = g < input_size ? input[g] : 0.0f;
    __syncthreads();
    int i = first + threadIdx.x;
    if (i >= output_size) return;
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; j++) sum += tile[threadIdx.x + j] * kernel[j];
    output[i] = sum;
}
