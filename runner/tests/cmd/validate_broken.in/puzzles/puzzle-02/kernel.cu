// Puzzle 02: one block, shared memory.
// out[i] = sum over j < conv with i + j < size of a[i + j] * b[j]
// One block of TPB >= SIZE threads. Each thread may read global memory twice and write it once.
// The runner defines TPB, SIZE and CONV, so the shared arrays can be sized at compile time.

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* a, const float* b, float* out, int size, int conv)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    __shared__ float sa[TPB];
    __shared__ float sb[CONV];
    int i = threadIdx.x;
    if (i < size) {
        sa[i] = a[i];
    }
    if (i < conv) {
        sb[i] = b[i];
    }
    __syncthreads();
    if (i >= size) {
        return;
    }
    float sum = 0.0f;
    for (int j = 0; j < conv && i + j < size; j++) {
        sum += sa[i + j] * sb[j];
    }
    out[i] = sum;
    // ANCHOR_END: solve
}
