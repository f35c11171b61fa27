// Puzzle 03: a comment that drifted from the solution.
// out[i] = sum over j < conv with i + j < size of a[i + j] * b[j]
// ceil(SIZE / TPB) blocks of TPB threads, CONV <= TPB. Each thread may read global memory three
// times and write it once. The runner defines TPB, SIZE and CONV.

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* a, const float* b, float* out, int size, int conv)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    // Your code here: load the block's tile with its halo (zeros past the end), wait, then sum.
    // ANCHOR_END: solve
}
