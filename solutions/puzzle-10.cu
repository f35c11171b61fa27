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
#define PER_THREAD 25
#define TILE_ROWS (BLOCK_Y * PER_THREAD)
#define TILE_COLS BLOCK_X
#define THREADS (BLOCK_X * BLOCK_Y)
#define MAX_K 31
#define WARPS (THREADS / 32)
// Five blocks per multiprocessor (at most 64 registers a thread). Staging a region of at most
// VECTORS float4s per thread takes one batch; a larger one goes in warp steps: each warp reads
// STEPS groups of 4 rows at once, VECTOR_GROUPS groups of 8 float4s (32 floats) per row.
#define MIN_BLOCKS 5
#define STEPS 4
#define VECTORS 8
#define VECTOR_GROUPS ((TILE_COLS + MAX_K - 1 + 31) / 32)

// Whole warps in a row of threads; float4 columns of the tile start on 16 bytes.
static_assert(BLOCK_X % 32 == 0 && TILE_COLS % 4 == 0 && TILE_ROWS % 2 == 1, "see the shape");

extern "C" __device__ const int launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS};
// ANCHOR_END: shape

// ANCHOR: stage
// Copies the block's h x w input region (h = TILE_ROWS + kernel_rows - 1, w = TILE_COLS +
// kernel_cols - 1) into shared memory, transposed: element (y, x) of the region at tile[x * h + y],
// zero past the image's last row or column (the input's padding is never used).
//
// When the input allows it (16-byte aligned, input_stride a multiple of 4), the region is read as
// float4s, and a warp's 32 vectors are always 4 rows x 8 vectors: the warp reads four 128-byte rows
// (coalesced), and its transposed stores, tile[(x + u) * h + y] with h odd, fall in 32 banks. Each
// thread asks for all its loads of a batch before it stores any: the block waits for global memory
// once per batch. Two ways to cut the region into batches, chosen by its size:
// - small kernels (up to 9 x 9 here): the region's vectors numbered row group by row group, item t
//   being row 4 * g + t % 4 and vector t / 4 - g * nv; VECTORS per thread cover the whole region,
//   so it is one batch with every thread loading (nearly) as many as the others;
// - larger ones: `stage_steps`.
// Otherwise, one float at a time.
__device__ __forceinline__ void put(float* tile, float4 v, int y, int x, int h, int w,
                                    int cols_left)
{
    float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int u = 0; u < 4; u++) {
        if (y < h && x + u < w) {
            tile[(x + u) * h + y] = x + u < cols_left ? e[u] : 0.0f;
        }
    }
}

// x < cols_left and stride % 4 == 0: the whole float4 lies within the row's stride.
__device__ __forceinline__ float4 get(const float* src, int y, int x, int rows_left, int cols_left,
                                      int stride)
{
    return y < rows_left && x < cols_left ? *reinterpret_cast<const float4*>(src + y * stride + x)
                                          : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// One batch of at most VECTORS float4s per thread, the region's items numbered.
__device__ __forceinline__ void stage_once(float* tile, const float* src, int h, int w, int nv,
                                           int items, int rows_left, int cols_left, int stride)
{
    int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    float4 v[VECTORS];
#pragma unroll
    for (int b = 0; b < VECTORS; b++) {
        int t = tid + b * THREADS, g = t / 4 / nv, y = 4 * g + t % 4, x = 4 * (t / 4 - g * nv);
        v[b] = get(src, t < items ? y : rows_left, x, rows_left, cols_left, stride);
    }
#pragma unroll
    for (int b = 0; b < VECTORS; b++) {
        int t = tid + b * THREADS, g = t / 4 / nv, y = 4 * g + t % 4, x = 4 * (t / 4 - g * nv);
        put(tile, v[b], t < items ? y : h, x, h, w, cols_left);
    }
}

// Warp steps: lane l of a warp takes row l % 4 of a group of 4 rows and vector l / 4 of a group of
// 8 vectors. A warp walks its rows STEPS groups at a time, every vector group of each
// (VECTOR_GROUPS cover the widest region): a batch is 4 * STEPS * WARPS = 96 rows, one for a
// 15 x 15 kernel. (The compiler lets some stores in between the loads to save registers.)
__device__ __forceinline__ void stage_steps(float* tile, const float* src, int h, int w,
                                            int rows_left, int cols_left, int stride)
{
    int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    int row = 4 * (tid / 32) + tid % 4, vec = tid % 32 / 4;
    for (int y0 = 0; y0 < h; y0 += 4 * WARPS * STEPS) {
        float4 v[STEPS][VECTOR_GROUPS];
#pragma unroll
        for (int s = 0; s < STEPS; s++) {
#pragma unroll
            for (int q = 0; q < VECTOR_GROUPS; q++) {
                int y = y0 + 4 * WARPS * s + row, x = 4 * (vec + 8 * q);
                v[s][q] = get(src, y, x, rows_left, cols_left, stride);
            }
        }
#pragma unroll
        for (int s = 0; s < STEPS; s++) {
#pragma unroll
            for (int q = 0; q < VECTOR_GROUPS; q++) {
                put(tile, v[s][q], y0 + 4 * WARPS * s + row, 4 * (vec + 8 * q), h, w, cols_left);
            }
        }
    }
}

__device__ __forceinline__ void stage(float* tile, const float* src, int h, int w, int rows_left,
                                      int cols_left, int stride, bool vectors)
{
    if (!vectors) {
        for (int k = threadIdx.y * BLOCK_X + threadIdx.x; k < h * w; k += THREADS) {
            int y = k / w, x = k - y * w;
            tile[x * h + y] = y < rows_left && x < cols_left ? src[y * stride + x] : 0.0f;
        }
        return;
    }
    int nv = (w + 3) / 4, items = (h + 3) / 4 * nv * 4;
    if (items <= VECTORS * THREADS) {
        stage_once(tile, src, h, w, nv, items, rows_left, cols_left, stride);
    } else {
        stage_steps(tile, src, h, w, rows_left, cols_left, stride);
    }
}
// ANCHOR_END: stage

// ANCHOR: chunk
// T taps w[0..T) of one kernel column against the window col[0 .. PER_THREAD + T - 1) of one
// staged column: acc[o] += col[o + i] * w[i]. The window is read once into registers and every
// index is a compile-time constant: PER_THREAD + T - 1 shared reads and (T + 3) / 4 float4 reads of
// taps (the same address for the whole warp: a broadcast) for PER_THREAD * T FFMAs.
template <int T>
__device__ __forceinline__ void chunk(float (&acc)[PER_THREAD], const float* col, const float* w)
{
    float x[PER_THREAD + T - 1], k[(T + 3) / 4 * 4];
#pragma unroll
    for (int q = 0; q < PER_THREAD + T - 1; q++) {
        x[q] = col[q];
    }
#pragma unroll
    for (int q = 0; q < (T + 3) / 4; q++) {
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

// Every kernel column, T taps of each: the chunk size is a constant of the whole loop, so a column
// costs its reads and multiply-adds and an add or two.
template <int T>
__device__ __forceinline__ void columns(float (&acc)[PER_THREAD], const float* col, const float* kj,
                                        int kernel_cols, int h)
{
    for (int j = 0; j < kernel_cols; j++) {
        chunk<T>(acc, col + j * h, kj + j * 32);
    }
}
// ANCHOR_END: chunk

// ANCHOR: signature
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    conv2d(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
           int input_stride, int kernel_rows, int kernel_cols, int output_stride)
// ANCHOR_END: signature
{
    extern __shared__ float tile[];
    // The taps by column, each column zero-padded to 32: taps[j][i] = kernel[i][j].
    __shared__ __align__(16) float taps[MAX_K][32];
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    int row0 = blockIdx.y * TILE_ROWS, col0 = blockIdx.x * TILE_COLS;
    int h = TILE_ROWS + kernel_rows - 1, w = TILE_COLS + kernel_cols - 1;
    for (int t = threadIdx.y * BLOCK_X + threadIdx.x; t < kernel_cols * 32; t += THREADS) {
        int j = t / 32, i = t % 32;
        taps[j][i] = i < kernel_rows ? kernel[i * kernel_cols + j] : 0.0f;
    }
    bool vectors = reinterpret_cast<unsigned long long>(input) % 16 == 0 && input_stride % 4 == 0;
    stage(tile, input + row0 * input_stride + col0, h, w, input_rows - row0, input_cols - col0,
          input_stride, vectors);
    __syncthreads();

    // ANCHOR: loop
    float acc[PER_THREAD];
#pragma unroll
    for (int o = 0; o < PER_THREAD; o++) {
        acc[o] = 0.0f;
    }
    // A kernel column is one chunk of exactly its kernel_rows taps, a template instance chosen once
    // for the whole kernel: a window of PER_THREAD + kernel_rows - 1 rows, always inside the region,
    // and no zero taps. Kernels of 17 to 31 rows take their first 16 taps in a first pass.
    const float* col = tile + threadIdx.x * h + threadIdx.y * PER_THREAD;
    int first = kernel_rows > 16 ? 16 : 0;
    if (first) {
        columns<16>(acc, col, &taps[0][0], kernel_cols, h);
    }
    col += first;
    const float* kj = &taps[0][first];  // 16-byte aligned: first is 0 or 16
    switch (kernel_rows - first) {
    case 1: columns<1>(acc, col, kj, kernel_cols, h); break;
    case 2: columns<2>(acc, col, kj, kernel_cols, h); break;
    case 3: columns<3>(acc, col, kj, kernel_cols, h); break;
    case 4: columns<4>(acc, col, kj, kernel_cols, h); break;
    case 5: columns<5>(acc, col, kj, kernel_cols, h); break;
    case 6: columns<6>(acc, col, kj, kernel_cols, h); break;
    case 7: columns<7>(acc, col, kj, kernel_cols, h); break;
    case 8: columns<8>(acc, col, kj, kernel_cols, h); break;
    case 9: columns<9>(acc, col, kj, kernel_cols, h); break;
    case 10: columns<10>(acc, col, kj, kernel_cols, h); break;
    case 11: columns<11>(acc, col, kj, kernel_cols, h); break;
    case 12: columns<12>(acc, col, kj, kernel_cols, h); break;
    case 13: columns<13>(acc, col, kj, kernel_cols, h); break;
    case 14: columns<14>(acc, col, kj, kernel_cols, h); break;
    case 15: columns<15>(acc, col, kj, kernel_cols, h); break;
    default: columns<16>(acc, col, kj, kernel_cols, h); break;
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
