// A kernel with a typo: `sume` is not declared.
extern "C" __global__ void conv1d(const float* a, const float* b, float* out, int size, int conv)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int j = 0; j < conv && i + j < size; j++) {
        sume += a[i + j] * b[j];
    }
    if (i < size) out[i] = sum;
}
