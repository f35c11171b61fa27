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
// ANCHOR: shape
// Each thread computes PER_THREAD outputs of one column, one below the other; BLOCK_Y threads
// stacked in a column cover the tile's TILE_ROWS rows, BLOCK_X threads side by side its columns.
// TILE_ROWS is odd on purpose: the staged region is kept column by column (see `stage`), each column
// TILE_ROWS + kernel_rows - 1 floats long, and for an odd kernel that length is odd, so the 32
// threads of a warp, reading 32 neighbouring columns, hit 32 different banks.
#define BLOCK_X 64
#define BLOCK_Y 3
#define PER_THREAD 21
#define TILE_ROWS (BLOCK_Y * PER_THREAD)
#define TILE_COLS BLOCK_X
#define THREADS (BLOCK_X * BLOCK_Y)
#define MAX_K 31

// The loop below needs the padding of a kernel column (at most 7 zeros) to fit above the bottom
// threads' rows, and whole warps in a row of threads.
static_assert(BLOCK_Y >= 2 && PER_THREAD >= 7 && BLOCK_X % 32 == 0, "see the loop");

// The loop below needs the padding of a kernel column (at most 7 zeros) to fit above the bottom
// threads' rows, and whole warps in a row of threads.
static_assert(BLOCK_Y >= 2 && PER_THREAD >= 7 && BLOCK_X % 32 == 0, "see the loop");

extern "C" __device__ const int launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS};
// ANCHOR_END: shape

// ANCHOR: stage
// Copies the block's (TILE_ROWS + kernel_rows - 1) x (TILE_COLS + kernel_cols - 1) input region
// into shared memory, transposed: element (y, x) of the region at tile[x * h + y], zero past the
// image's last row or column (the input's padding is never read). Reads walk the image's rows
// (neighbouring threads, neighbouring floats: coalesced); each thread issues its loads for four
// rows before it stores any, so the block waits for global memory once per four rows.
__device__ __forceinline__ void stage(float* tile, const float* src, int h, int w, int rows_left,
                                      int cols_left, int stride)
{
    for (int y0 = threadIdx.y; y0 < h; y0 += 4 * BLOCK_Y) {
        float v[4][2];
#pragma unroll
        for (int u = 0; u < 4; u++) {
#pragma unroll
            for (int half = 0; half < 2; half++) {
                int y = y0 + u * BLOCK_Y, x = threadIdx.x + half * BLOCK_X;
                bool inside = y < rows_left && x < cols_left && y < h && x < w;
                v[u][half] = inside ? src[y * stride + x] : 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
#pragma unroll
            for (int half = 0; half < 2; half++) {
                int y = y0 + u * BLOCK_Y, x = threadIdx.x + half * BLOCK_X;
                if (y < h && x < w) {
                    tile[x * h + y] = v[u][half];
                }
            }
        }
    }
}
// ANCHOR_END: stage

// ANCHOR: chunk
// T taps w[0..T) of one kernel column against the window col[0 .. PER_THREAD + T - 1) of one
// staged column: acc[o] += col[o + i] * w[i]. The window is read once into registers and every
// index is a compile-time constant: PER_THREAD + T - 1 shared reads and T / 4 float4 reads of taps
// (the same address for the whole warp: a broadcast) for PER_THREAD * T FFMAs.
template <int T>
__device__ __forceinline__ void chunk(float (&acc)[PER_THREAD], const float* col, const float* w)
{
    float x[PER_THREAD + T - 1], k[T];
#pragma unroll
    for (int q = 0; q < PER_THREAD + T - 1; q++) {
        x[q] = col[q];
    }
#pragma unroll
    for (int q = 0; q < T / 4; q++) {
        float4 v = reinterpret_cast<const float4*>(w)[q];  // w: 16-byte aligned, see the loop
        k[4 * q] = v.x;
        k[4 * q + 1] = v.y;
        k[4 * q + 2] = v.z;
        k[4 * q + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < T; i++) {
#pragma unroll
        for (int o = 0; o < PER_THREAD; o++) {
            acc[o] = fmaf(x[o + i], k[i], acc[o]);
        }
    }
}
// ANCHOR_END: chunk

// ANCHOR: signature
extern "C" __global__ void __launch_bounds__(THREADS)
    conv2d(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
           int input_stride, int kernel_rows, int kernel_cols, int output_stride)
// ANCHOR_END: signature
{
    extern __shared__ float tile[];
    // The taps by column and zero-padded to kr_pad rows (4, or a multiple of 8): taps[0][j] has
    // the zeros after kernel column j, taps[1][j] before it (see the loop).
    __shared__ __align__(16) float taps[2][MAX_K][32];
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    int row0 = blockIdx.y * TILE_ROWS, col0 = blockIdx.x * TILE_COLS;
    int h = TILE_ROWS + kernel_rows - 1, w = TILE_COLS + kernel_cols - 1;
    int kr_pad = kernel_rows <= 4 ? 4 : (kernel_rows + 7) / 8 * 8;
    int pad = kr_pad - kernel_rows;
    for (int t = threadIdx.y * BLOCK_X + threadIdx.x; t < kernel_cols * kr_pad; t += THREADS) {
        int j = t / kr_pad, p = t % kr_pad;
        taps[0][j][p] = p < kernel_rows ? kernel[p * kernel_cols + j] : 0.0f;
        taps[1][j][p] = p >= pad ? kernel[(p - pad) * kernel_cols + j] : 0.0f;
    }
    stage(tile, input + row0 * input_stride + col0, h, w, input_rows - row0, input_cols - col0,
          input_stride);
    __syncthreads();

    // ANCHOR: loop
    float acc[PER_THREAD];
#pragma unroll
    for (int o = 0; o < PER_THREAD; o++) {
        acc[o] = 0.0f;
    }
    // A kernel column's taps are taken 16 (then 8, or 4) at a time, zero-padded to kr_pad: a
    // window of PER_THREAD + kr_pad - 1 rows. For the bottom threads of the tile that is `pad`
    // rows more than the region holds, so they take the taps with the zeros in front and start
    // their window `pad` rows higher: every read stays in the region, and every extra row
    // read meets a zero tap. (The rows are warp-uniform: BLOCK_X is a multiple of 32.)
    bool bottom = threadIdx.y == BLOCK_Y - 1;
    int first = threadIdx.y * PER_THREAD - (bottom ? pad : 0);
    for (int j = 0; j < kernel_cols; j++) {
        const float* col = tile + (threadIdx.x + j) * h + first;
        const float* kj = taps[bottom][j];
        int i = 0;
        for (; i + 16 <= kr_pad; i += 16) {
            chunk<16>(acc, col + i, kj + i);
        }
        if (kr_pad - i == 8) {
            chunk<8>(acc, col + i, kj + i);
        } else if (kr_pad == 4) {
            chunk<4>(acc, col + i, kj + i);
        }
    }
    // ANCHOR_END: loop

    int c = col0 + threadIdx.x;
    if (c < output_cols) {
#pragma unroll
        for (int o = 0; o < PER_THREAD; o++) {
            int r = row0 + threadIdx.y * PER_THREAD + o;
            if (r < output_rows) {
                output[r * output_stride + c] = acc[o];
            }
        }
    }
}
// ANCHOR_END: solve
