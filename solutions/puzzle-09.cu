// Puzzle 09: a 2D output tile per block (the valid 2D contract, rows pitched).
// output[r * output_stride + c] = sum over i < kernel_rows, j < kernel_cols of
//     input[(r + i) * input_stride + c + j] * kernel[i * kernel_cols + j]
// for r < input_rows - kernel_rows + 1 and c < input_cols - kernel_cols + 1.
// Strides count floats and may exceed the widths: the input's padding holds NaN, and the output's
// padding must be left as it is. The runner defines ROW_BLOCK and COL_BLOCK and launches
// ceil(output_cols / COL_BLOCK) x ceil(output_rows / ROW_BLOCK) blocks of (COL_BLOCK, ROW_BLOCK)
// threads: x walks the columns.

// ANCHOR: signature
extern "C" __global__ void conv2d(const float* input, const float* kernel, float* output, int input_rows,
                                  int input_cols, int input_stride, int kernel_rows, int kernel_cols,
                                  int output_stride)
// ANCHOR_END: signature
{
    // ANCHOR: solve
    // ANCHOR: index
    // The block owns the tile whose top-left output is (blockIdx.y * ROW_BLOCK, blockIdx.x *
    // COL_BLOCK); the thread owns one output of it. Neighbouring threads of a warp (consecutive x)
    // own neighbouring columns of one row, so every load and the store are contiguous.
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    int r = blockIdx.y * ROW_BLOCK + threadIdx.y;
    int c = blockIdx.x * COL_BLOCK + threadIdx.x;
    // The tiles on the right and bottom edges stick out: those threads have no output.
    if (r >= output_rows || c >= output_cols) {
        return;
    }
    // ANCHOR_END: index
    // ANCHOR: taps
    // Kernel position by kernel position, as the Triton program does with whole tiles: for tap
    // (i, j), the thread's share of the tile shifted by (i, j). Rows are input_stride apart.
    float sum = 0.0f;
    for (int i = 0; i < kernel_rows; i++) {
        const float* row = input + (r + i) * input_stride + c;
        for (int j = 0; j < kernel_cols; j++) {
            sum += row[j] * kernel[i * kernel_cols + j];
        }
    }
    output[r * output_stride + c] = sum;
    // ANCHOR_END: taps
    // ANCHOR_END: solve
}
