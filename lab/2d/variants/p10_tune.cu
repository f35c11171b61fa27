// Puzzle 10 tuning variants: the solution's structure (a transposed staged region, columns of
// PER_THREAD outputs in registers) with its choices behind macros.
// STAGE 4 / 8 / 16: scalar loads, that many rows of the region per batch (the solution: 4).
// STAGE 0: float4 loads when the input is 16-byte aligned and input_stride % 4 == 0 (else 8 rows
//          of scalar loads), 4 rows x 8 vectors per warp, so the transposed stores hit 32 banks;
//          VB vectors per thread per batch.
// EXACT 0: a kernel column in chunks padded with zero taps to 4 or a multiple of 8 (the
//          solution); EXACT 1: chunks of 16, then one chunk of exactly the rest (1 to 15).
// MINB: __launch_bounds__'s minimum blocks per multiprocessor.
#ifndef BLOCK_X
#define BLOCK_X 64
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 3
#endif
#ifndef PER_THREAD
#define PER_THREAD 21
#endif
#ifndef STAGE
#define STAGE 4
#endif
#ifndef VB
#define VB 8
#endif
#ifndef EXACT
#define EXACT 0
#endif
#ifndef MINB
#define MINB 1
#endif
#define TILE_ROWS (BLOCK_Y * PER_THREAD)
#define TILE_COLS BLOCK_X
#define THREADS (BLOCK_X * BLOCK_Y)
#define MAX_K 31

static_assert(EXACT || (BLOCK_Y >= 2 && PER_THREAD >= 7), "padded chunks: see the loop");
static_assert(BLOCK_X % 32 == 0, "whole warps in a row of threads");

extern "C" __device__ const int launch_shape[4] = {BLOCK_X, BLOCK_Y, TILE_ROWS, TILE_COLS};

template <int B>
__device__ __forceinline__ void stage_rows(float* tile, const float* src, int h, int w, int rows_left,
                                           int cols_left, int stride)
{
    for (int y0 = threadIdx.y; y0 < h; y0 += B * BLOCK_Y) {
        float v[B][2];
#pragma unroll
        for (int u = 0; u < B; u++) {
#pragma unroll
            for (int half = 0; half < 2; half++) {
                int y = y0 + u * BLOCK_Y, x = threadIdx.x + half * BLOCK_X;
                bool inside = y < rows_left && x < cols_left && y < h && x < w;
                v[u][half] = inside ? src[y * stride + x] : 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < B; u++) {
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

// float4 staging: item t = ((g * nv) + v) * 4 + yy is row 4g + yy, columns 4v .. 4v + 3 of the
// region; a warp's 32 items are 8 vectors x 4 rows, so its transposed stores (x * h + y, h odd)
// land in 32 banks and its loads are four 128-byte rows.
__device__ __forceinline__ void stage_vec(float* tile, const float* src, int h, int w, int rows_left,
                                          int cols_left, int stride)
{
    int nv = (w + 3) / 4;
    int items = (h + 3) / 4 * nv * 4;
    int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    for (int t0 = tid; t0 < items; t0 += VB * THREADS) {
        float4 v[VB];
#pragma unroll
        for (int b = 0; b < VB; b++) {
            int t = t0 + b * THREADS;
            int yy = t & 3, pair = t >> 2;
            int g = pair / nv, vv = pair - g * nv;
            int y = 4 * g + yy, x = 4 * vv;
            bool inside = t < items && y < rows_left && x < cols_left;
            v[b] = inside ? *reinterpret_cast<const float4*>(src + y * stride + x)
                          : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < VB; b++) {
            int t = t0 + b * THREADS;
            int yy = t & 3, pair = t >> 2;
            int g = pair / nv, vv = pair - g * nv;
            int y = 4 * g + yy, x = 4 * vv;
            if (t < items && y < h) {
                float e[4] = {v[b].x, v[b].y, v[b].z, v[b].w};
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    if (x + u < w) {
                        tile[(x + u) * h + y] = x + u < cols_left ? e[u] : 0.0f;
                    }
                }
            }
        }
    }
}

template <int T>
__device__ __forceinline__ void chunk(float (&acc)[PER_THREAD], const float* col, const float* w)
{
    constexpr int T4 = (T + 3) / 4;
    float x[PER_THREAD + T - 1], k[4 * T4];
#pragma unroll
    for (int q = 0; q < PER_THREAD + T - 1; q++) {
        x[q] = col[q];
    }
#pragma unroll
    for (int q = 0; q < T4; q++) {
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

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    conv2d(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
           int input_stride, int kernel_rows, int kernel_cols, int output_stride)
{
    extern __shared__ float tile[];
    __shared__ __align__(16) float taps[2][MAX_K][32];
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    int row0 = blockIdx.y * TILE_ROWS, col0 = blockIdx.x * TILE_COLS;
    int h = TILE_ROWS + kernel_rows - 1, w = TILE_COLS + kernel_cols - 1;
#if EXACT
    int kr_pad = (kernel_rows + 3) / 4 * 4;
    int pad = 0;
    for (int t = threadIdx.y * BLOCK_X + threadIdx.x; t < kernel_cols * 32; t += THREADS) {
        int j = t / 32, p = t % 32;
        taps[0][j][p] = p < kernel_rows ? kernel[p * kernel_cols + j] : 0.0f;
    }
#else
    int kr_pad = kernel_rows <= 4 ? 4 : (kernel_rows + 7) / 8 * 8;
    int pad = kr_pad - kernel_rows;
    for (int t = threadIdx.y * BLOCK_X + threadIdx.x; t < kernel_cols * kr_pad; t += THREADS) {
        int j = t / kr_pad, p = t % kr_pad;
        taps[0][j][p] = p < kernel_rows ? kernel[p * kernel_cols + j] : 0.0f;
        taps[1][j][p] = p >= pad ? kernel[(p - pad) * kernel_cols + j] : 0.0f;
    }
#endif
    const float* src = input + row0 * input_stride + col0;
    int rows_left = input_rows - row0, cols_left = input_cols - col0;
#if STAGE == 0
    bool aligned = (reinterpret_cast<unsigned long long>(input) & 15) == 0 && (input_stride & 3) == 0;
    if (aligned) {
        stage_vec(tile, src, h, w, rows_left, cols_left, input_stride);
    } else {
        stage_rows<8>(tile, src, h, w, rows_left, cols_left, input_stride);
    }
#else
    stage_rows<STAGE>(tile, src, h, w, rows_left, cols_left, input_stride);
#endif
    __syncthreads();

    float acc[PER_THREAD];
#pragma unroll
    for (int o = 0; o < PER_THREAD; o++) {
        acc[o] = 0.0f;
    }
#if EXACT
    (void)kr_pad;
    (void)pad;
    const float* base = tile + threadIdx.x * h + threadIdx.y * PER_THREAD;
    for (int j = 0; j < kernel_cols; j++) {
        const float* col = base + j * h;
        const float* kj = taps[0][j];
        int i = 0;
        for (; i + 16 <= kernel_rows; i += 16) {
            chunk<16>(acc, col + i, kj + i);
        }
        switch (kernel_rows - i) {
        case 1: chunk<1>(acc, col + i, kj + i); break;
        case 2: chunk<2>(acc, col + i, kj + i); break;
        case 3: chunk<3>(acc, col + i, kj + i); break;
        case 4: chunk<4>(acc, col + i, kj + i); break;
        case 5: chunk<5>(acc, col + i, kj + i); break;
        case 6: chunk<6>(acc, col + i, kj + i); break;
        case 7: chunk<7>(acc, col + i, kj + i); break;
        case 8: chunk<8>(acc, col + i, kj + i); break;
        case 9: chunk<9>(acc, col + i, kj + i); break;
        case 10: chunk<10>(acc, col + i, kj + i); break;
        case 11: chunk<11>(acc, col + i, kj + i); break;
        case 12: chunk<12>(acc, col + i, kj + i); break;
        case 13: chunk<13>(acc, col + i, kj + i); break;
        case 14: chunk<14>(acc, col + i, kj + i); break;
        case 15: chunk<15>(acc, col + i, kj + i); break;
        default: break;
        }
    }
#else
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
#endif

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
