// Puzzle 01: one thread per output.
// out[i] = sum over j < conv with i + j < size of a[i + j] * b[j]
// The runner defines TPB, SIZE and CONV; this puzzle needs only the arguments.

// ANCHOR: signature
extern "C" __global__ void conv1d(const float* a, const float* b, float* out, int size, int conv)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    // Your code here: find this thread's output index, guard it, and sum the taps.
    // ANCHOR_END: solve
}
