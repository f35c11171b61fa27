// Puzzle 01: one thread per output.
// out[i] = sum over j < conv with i + j < size of a[i + j] * b[j]
// The runner defines TPB, SIZE and CONV; this puzzle needs only the arguments.

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* a, const float* b, float* out, int size, int conv)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= size) {
        return;
    }
    float sum = 0.0f;
    for (int j = 0; j < conv && i + j < size; j++) {
        sum += a[i + j] * b[j];
    }
    out[i] = sum;
    // ANCHOR_END: solve
}
