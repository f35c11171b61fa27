// Puzzle 03: across the block boundary.
// out[i] = sum over j < conv with i + j < size of a[i + j] * b[j]
// ceil(SIZE / TPB) blocks of TPB threads, CONV <= TPB. Each thread may read global memory three
// times and write it once. The runner defines TPB, SIZE and CONV.

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* a, const float* b, float* out, int size, int conv)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    // The block's TPB inputs, then the CONV - 1 inputs of the next block that its last outputs need.
    __shared__ float tile[TPB + CONV - 1];
    __shared__ float sb[CONV];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = i < size ? a[i] : 0.0f;
    if (t < conv - 1) {
        int h = i + TPB;
        tile[TPB + t] = h < size ? a[h] : 0.0f;
    }
    if (t < conv) {
        sb[t] = b[t];
    }
    __syncthreads();
    if (i >= size) {
        return;
    }
    // Past the end the tile holds zeros, so no bounds check is needed here.
    float sum = 0.0f;
    for (int j = 0; j < conv; j++) {
        sum += tile[t + j] * sb[j];
    }
    out[i] = sum;
    // ANCHOR_END: solve
}
