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
    // Kernel position by kernel position, as the Triton program does with whole tiles, but nine
    // at a time: three kernel rows, three taps of each. The nine input loads and nine tap loads of
    // such a block are all issued before its first multiply-add, so the thread waits for memory
    // once per nine taps. (A loop whose length is known only at run time issues its loads one or
    // two at a time, and waits after each.) Taps left over on the right of three rows, then rows
    // left over at the bottom, go one at a time. Rows are input_stride apart.
    float sum = 0.0f;
    int i = 0;
    for (; i + 3 <= kernel_rows; i += 3) {
        const float* row = input + (r + i) * input_stride + c;
        const float* taps = kernel + i * kernel_cols;
        int j = 0;
        for (; j + 3 <= kernel_cols; j += 3) {
            float x[3][3], k[3][3];
#pragma unroll
            for (int h = 0; h < 3; h++) {
#pragma unroll
                for (int u = 0; u < 3; u++) {
                    x[h][u] = row[h * input_stride + j + u];
                    k[h][u] = taps[h * kernel_cols + j + u];
                }
            }
#pragma unroll
            for (int h = 0; h < 3; h++) {
#pragma unroll
                for (int u = 0; u < 3; u++) {
                    sum += x[h][u] * k[h][u];
                }
            }
        }
        for (; j < kernel_cols; j++) {
            float x[3], k[3];
#pragma unroll
            for (int h = 0; h < 3; h++) {
                x[h] = row[h * input_stride + j];
                k[h] = taps[h * kernel_cols + j];
            }
#pragma unroll
            for (int h = 0; h < 3; h++) {
                sum += x[h] * k[h];
            }
        }
    }
    for (; i < kernel_rows; i++) {
        const float* row = input + (r + i) * input_stride + c;
        for (int j = 0; j < kernel_cols; j++) {
            sum += row[j] * kernel[i * kernel_cols + j];
        }
    }
    output[r * output_stride + c] = sum;
    // ANCHOR_END: taps
    // ANCHOR_END: solve
}
