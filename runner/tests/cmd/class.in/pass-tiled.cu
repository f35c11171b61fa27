// A shared tile of the inputs of 128 outputs (up to 2047 taps: 8704 bytes), loaded once per block.
extern "C" __device__ const int launch_shape[3] = {128, 128, 8704};

extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
{
    extern __shared__ float tile[];
    int first = blockIdx.x * 128;
    for (int k = threadIdx.x; k < 128 + kernel_size - 1; k += 128) {
        tile[k] = first + k < input_size ? input[first + k] : 0.0f;
    }
    __syncthreads();
    int i = first + threadIdx.x;
    if (i >= input_size - kernel_size + 1) return;
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; j++) sum += tile[threadIdx.x + j] * kernel[j];
    output[i] = sum;
}
