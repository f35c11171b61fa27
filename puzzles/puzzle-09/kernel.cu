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
    // Your code here: find this thread's output (r, c), guard it, and sum the
    // kernel_rows x kernel_cols products into output[r * output_stride + c].
    // ANCHOR_END: solve
}
