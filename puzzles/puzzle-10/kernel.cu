// Puzzle 10: stage the tile once, then block in registers (the valid 2D contract, rows pitched).
// output[r * output_stride + c] = sum over i < kernel_rows, j < kernel_cols of
//     input[(r + i) * input_stride + c + j] * kernel[i * kernel_cols + j]
// for r < input_rows - kernel_rows + 1 and c < input_cols - kernel_cols + 1; kernels up to 31 x 31.
// The input's padding holds NaN; the output's padding must be left as it is.
// You choose the launch: declare it in this file as
//   extern "C" __device__ const int launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS};
// and the runner launches ceil(output_cols / TILE_COLS) x ceil(output_rows / TILE_ROWS) blocks of
// (BLOCK_X, BLOCK_Y) threads with 4 * (TILE_ROWS + kernel_rows - 1) * (TILE_COLS + kernel_cols - 1)
// bytes of dynamic shared memory. No macros are defined for you.

// ANCHOR: solve
// Your code here: choose the shape, declare it, and write the kernel. This start compiles and
// launches (32 x 8 threads per 32 x 32 output tile) but computes nothing yet.
extern "C" __device__ const int launch_shape[4] = {32, 8, 32, 32};

// ANCHOR: signature
extern "C" __global__ void conv2d(const float* input, const float* kernel, float* output, int input_rows,
                                  int input_cols, int input_stride, int kernel_rows, int kernel_cols,
                                  int output_stride)
// ANCHOR_END: signature
{
}
// ANCHOR_END: solve
