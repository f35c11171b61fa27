// Puzzle 10, second design (round 4): fewer instructions around the multiply-adds.
// - The taps by column, 32 floats per column (no division to place them).
// - The region staged with float4 loads when the input allows it (16-byte aligned, stride % 4 == 0):
//   a warp copies 4 rows x 8 vectors per step, its loads for 2 * VEC_GROUPS steps issued before any
//   store; a scalar loop otherwise.
// - Each kernel column in one chunk of exactly its rows (at most 16; a 17..31-row kernel takes its
//   first 16 rows in a first pass): no zero taps, and the chunk size is a template parameter of the
//   whole column loop, so that a column costs its loads and multiply-adds and a few adds.
#ifndef BLOCK_X
#define BLOCK_X 64
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 3
#endif
#ifndef PER_THREAD
#define PER_THREAD 21
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef STEPS
#define STEPS 2
#endif
#define TILE_ROWS (BLOCK_Y * PER_THREAD)
#define TILE_COLS BLOCK_X
#define THREADS (BLOCK_X * BLOCK_Y)
#define WARPS (THREADS / 32)
#define MAX_K 31
#define VEC_GROUPS ((TILE_COLS + MAX_K - 1 + 31) / 32)

static_assert(BLOCK_X % 32 == 0 && TILE_ROWS % 2 == 1, "whole warps in a row of threads; odd tile rows");

extern "C" __device__ const int launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS};

__device__ __forceinline__ void stage(float* tile, const float* src, int h, int w, int rows_left, int cols_left,
                                      int stride, bool vectors)
{
    int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    if (vectors) {
        int lane = tid % 32, warp = tid / 32;
        int yy = lane % 4, v = lane / 4;
        for (int y0 = 4 * warp; y0 < h; y0 += 4 * WARPS * STEPS) {
            float4 a[STEPS][VEC_GROUPS];
#pragma unroll
            for (int s = 0; s < STEPS; s++) {
#pragma unroll
                for (int q = 0; q < VEC_GROUPS; q++) {
                    int y = y0 + 4 * WARPS * s + yy, x = 4 * (v + 8 * q);
                    a[s][q] = y < rows_left && x < cols_left ? *reinterpret_cast<const float4*>(src + y * stride + x)
                                                            : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                }
            }
#pragma unroll
            for (int s = 0; s < STEPS; s++) {
#pragma unroll
                for (int q = 0; q < VEC_GROUPS; q++) {
                    int y = y0 + 4 * WARPS * s + yy, x = 4 * (v + 8 * q);
                    float e[4] = {a[s][q].x, a[s][q].y, a[s][q].z, a[s][q].w};
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        if (y < h && x + u < w) {
                            tile[(x + u) * h + y] = x + u < cols_left ? e[u] : 0.0f;
                        }
                    }
                }
            }
        }
    } else {
        for (int k = tid; k < h * w; k += THREADS) {
            int y = k / w, x = k - y * w;
            tile[x * h + y] = y < rows_left && x < cols_left ? src[y * stride + x] : 0.0f;
        }
    }
}

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
        float4 v = reinterpret_cast<const float4*>(w)[q];
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

template <int T>
__device__ __forceinline__ void columns(float (&acc)[PER_THREAD], const float* col, const float* kj, int kernel_cols,
                                     int h)
{
    for (int j = 0; j < kernel_cols; j++) {
        chunk<T>(acc, col + j * h, kj + j * 32);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    conv2d(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
           int input_stride, int kernel_rows, int kernel_cols, int output_stride)
{
    extern __shared__ float tile[];
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
    stage(tile, input + row0 * input_stride + col0, h, w, input_rows - row0, input_cols - col0, input_stride,
          vectors);
    __syncthreads();

    float acc[PER_THREAD];
#pragma unroll
    for (int o = 0; o < PER_THREAD; o++) {
        acc[o] = 0.0f;
    }
    const float* col = tile + threadIdx.x * h + threadIdx.y * PER_THREAD;
    int first = kernel_rows > 16 ? 16 : 0;
    if (first) {
        columns<16>(acc, col, &taps[0][0], kernel_cols, h);
    }
    col += first;
    const float* kj = &taps[0][first];
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
