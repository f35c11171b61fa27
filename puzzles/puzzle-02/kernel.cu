// Puzzle 02: one block, shared memory.
// out[i] = sum over j < conv with i + j < size of a[i + j] * b[j]
// One block of TPB >= SIZE threads. Each thread may read global memory twice and write it once.
// The runner defines TPB, SIZE and CONV, so the shared arrays can be sized at compile time.

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* a, const float* b, float* out, int size, int conv)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    // Your code here: copy a and b into shared memory, wait for the block, then sum from shared memory.
    // ANCHOR_END: solve
}
