// Puzzle 11: implicit GEMM on tensor cores (multi-channel conv2d, NHWC input, HWIO weight).
// output[b][r][c][o] = sum over i < kernel_rows, j < kernel_cols, ch < input_channels of
//     input[b][r + i][c + j][ch] * weight[i][j][ch][o]
// for r < input_rows - kernel_rows + 1, c < input_cols - kernel_cols + 1; all arrays dense.
// As a matrix product: output[M, OC] = A[M, K] x weight[K, OC], M = batch * output_rows *
// output_cols, K = kernel_rows * kernel_cols * input_channels, A = im2col(input) (never built).
// You choose the launch: declare it in this file as
//   extern "C" __device__ const int launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};
// and the runner launches ceil(M / BLOCK_M) x ceil(output_channels / BLOCK_N) blocks of THREADS
// threads with SHARED_BYTES of dynamic shared memory. No macros are defined for you.

// ANCHOR: solve
// ANCHOR: shape
// A block owns a BLOCK_M x BLOCK_N tile of the product and walks K in tiles of BLOCK_K, STAGES
// of them in flight through shared memory. Its WARPS_M x WARPS_N warps each own a WARP_M x WARP_N
// piece: MT x NT tensor-core tiles of 16 x 8, whose accumulators stay in registers throughout.
// (The #ifndef's let a tuning harness try other shapes with -D; the runner defines nothing.)
#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 128
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef STAGES
#define STAGES 2
#endif
#define BLOCK_K 32
#define THREADS (32 * WARPS_M * WARPS_N)
#define WARP_M (BLOCK_M / WARPS_M)
#define WARP_N (BLOCK_N / WARPS_N)
#define MT (WARP_M / 16)
#define NT (WARP_N / 8)
// Shared rows are padded so that a warp's fragment loads hit 32 different banks: an A row is
// BLOCK_K + 4 floats (lane (g, t) reads word 36g + t: bank 4g + t), a B row BLOCK_N + 8 floats
// (lane (g, t) reads word (BLOCK_N + 8)t + g: bank 8t + g, BLOCK_N being a multiple of 32).
#define A_STRIDE (BLOCK_K + 4)
#define B_STRIDE (BLOCK_N + 8)
#define A_FLOATS (BLOCK_M * A_STRIDE)
#define B_FLOATS (BLOCK_K * B_STRIDE)
#define SHARED_BYTES (STAGES * (A_FLOATS + B_FLOATS) * 4)

static_assert(BLOCK_M % (16 * WARPS_M) == 0 && BLOCK_N % (8 * WARPS_N) == 0, "whole mma tiles");
static_assert(BLOCK_N % 32 == 0 && THREADS % (BLOCK_K / 4) == 0, "the loaders' layouts");
static_assert((BLOCK_M * BLOCK_K / 4) % THREADS == 0 && (BLOCK_K * BLOCK_N / 4) % THREADS == 0,
              "every thread copies the same number of 16-byte pieces");

extern "C" __device__ const int launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};
// ANCHOR_END: shape

// ANCHOR: async
// Copies `bytes` (4 or 16) from global to shared memory without passing through registers; with
// `valid` false nothing is read and the destination is filled with zeros. `l1` keeps the line in
// L1 too (16-byte copies only; 4-byte ones always go through L1).
__device__ __forceinline__ void copy_async(float* dst, const float* src, bool valid, int bytes,
                                           bool l1 = false)
{
    unsigned at = (unsigned)__cvta_generic_to_shared(dst);
    int n = valid ? bytes : 0;
    if (bytes == 16 && l1) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(at), "l"(src), "r"(n));
    } else if (bytes == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(at), "l"(src), "r"(n));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(at), "l"(src), "r"(n));
    }
}
// ANCHOR_END: async

// The sizes of the product and the image, shared by the loaders.
struct Dims {
    int m, k, n;          // M, K and output_channels
    int ic, kc, cols;     // input_channels, kernel_cols, input_cols
    int out_rows, out_cols, rows;
};

// ANCHOR: load
// Starts the copy of K tile `k0` into one stage: A[m0 .. m0 + BLOCK_M, k0 .. k0 + BLOCK_K] as
// BLOCK_M rows of A_STRIDE floats, weight[k0 .. + BLOCK_K, n0 .. n0 + BLOCK_N] as BLOCK_K rows of
// B_STRIDE floats; zeros past M, K and N. Element k of A's row m is input element
// window(m) + tap(k): window(m) the offset of the pixel's top-left input, tap(k) that of tap
// (i, j) = (k / (kc * ic), k / ic % kc), channel k % ic, within the window. Where input_channels
// and output_channels are multiples of 4, four neighbouring k (or n) are four neighbouring
// floats, 16 bytes in one copy; otherwise each float is copied alone.
__device__ __forceinline__ int window(const Dims& d, int m)
{
    int c = m % d.out_cols, r = m / d.out_cols % d.out_rows, b = m / (d.out_cols * d.out_rows);
    return ((b * d.rows + r) * d.cols + c) * d.ic;
}

__device__ __forceinline__ int tap(const Dims& d, int k)
{
    int ch = k % d.ic, j = k / d.ic % d.kc, i = k / (d.ic * d.kc);
    return (i * d.cols + j) * d.ic + ch;
}

// A thread's rows of A in the wide copy: row t / (BLOCK_K / 4) + r * A_ROW_STEP, r < A_ROWS.
#define A_ROW_STEP (THREADS / (BLOCK_K / 4))
#define A_ROWS (BLOCK_M / A_ROW_STEP)

__device__ __forceinline__ void load_tile(float* sa, float* sb, const float* input,
                                          const float* weight, const Dims& d, int m0, int n0,
                                          int k0, bool wide, const int* win)
{
    if (wide) {
        // 16 bytes a copy: the thread copies column quad t % (BLOCK_K / 4) of its A_ROWS rows,
        // whose windows it found once (win[r] < 0: past M).
        int kq = threadIdx.x % (BLOCK_K / 4) * 4, k = k0 + kq;
        int off = k < d.k ? tap(d, k) : 0;
#pragma unroll
        for (int r = 0; r < A_ROWS; r++) {
            int row = threadIdx.x / (BLOCK_K / 4) + r * A_ROW_STEP;
            bool valid = win[r] >= 0 && k < d.k;
            copy_async(&sa[row * A_STRIDE + kq], input + (valid ? win[r] + off : 0), valid, 16, true);
        }
        int nq = threadIdx.x % (BLOCK_N / 4) * 4;
#pragma unroll
        for (int r = 0; r < BLOCK_K * BLOCK_N / 4 / THREADS; r++) {
            int kk = threadIdx.x / (BLOCK_N / 4) + r * (THREADS / (BLOCK_N / 4));
            bool valid = k0 + kk < d.k && n0 + nq < d.n;
            copy_async(&sb[kk * B_STRIDE + nq], weight + (valid ? (k0 + kk) * d.n + n0 + nq : 0),
                       valid, 16);
        }
    } else {
        for (int e = threadIdx.x; e < BLOCK_M * BLOCK_K; e += THREADS) {
            int row = e / BLOCK_K, kk = e % BLOCK_K, m = m0 + row, k = k0 + kk;
            bool valid = m < d.m && k < d.k;
            copy_async(&sa[row * A_STRIDE + kk], input + (valid ? window(d, m) + tap(d, k) : 0),
                       valid, 4);
        }
        for (int e = threadIdx.x; e < BLOCK_K * BLOCK_N; e += THREADS) {
            int kk = e / BLOCK_N, nn = e % BLOCK_N;
            bool valid = k0 + kk < d.k && n0 + nn < d.n;
            copy_async(&sb[kk * B_STRIDE + nn], weight + (valid ? (k0 + kk) * d.n + n0 + nn : 0),
                       valid, 4);
        }
    }
}
// ANCHOR_END: load

// ANCHOR: mma
// float -> tf32 (round to nearest, ties away from zero), as the tensor core's operand.
__device__ __forceinline__ unsigned tf32(unsigned bits)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(bits)));
    return r;
}

// d += a x b for one 16 x 8 x 8 tile; a, b and d in the PTX ISA's fragment layout (lane l:
// g = l / 4, t = l % 4): a = A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4]; b = B[t][g],
// B[t + 4][g]; d = D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1].
__device__ __forceinline__ void mma(float* d, const unsigned* a, const unsigned* b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One K tile of a warp's piece: BLOCK_K / 8 steps, each loading the MT A fragments with ldmatrix
// (x4: lane l names row l % 8 + 8 * (l / 8 % 2), column 4 * (l / 16) of the 16 x 8 tile, and
// gets back exactly its a[0..3]) and the NT B fragments word by word, then MT x NT mma's.
__device__ __forceinline__ void compute_tile(float (*acc)[NT][4], const float* sa, const float* sb,
                                             int wm, int wn)
{
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int kb = 0; kb < BLOCK_K; kb += 8) {
        unsigned a[MT][4], b[NT][2];
#pragma unroll
        for (int i = 0; i < MT; i++) {
            int row = wm + i * 16 + lane % 8 + 8 * (lane / 8 % 2), col = kb + 4 * (lane / 16);
            unsigned at = (unsigned)__cvta_generic_to_shared(&sa[row * A_STRIDE + col]);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                         : "r"(at));
#pragma unroll
            for (int q = 0; q < 4; q++) {
                a[i][q] = tf32(a[i][q]);
            }
        }
#pragma unroll
        for (int j = 0; j < NT; j++) {
            const float* col = &sb[(kb + t) * B_STRIDE + wn + j * 8 + g];
            b[j][0] = tf32(__float_as_uint(col[0]));
            b[j][1] = tf32(__float_as_uint(col[4 * B_STRIDE]));
        }
#pragma unroll
        for (int i = 0; i < MT; i++) {
#pragma unroll
            for (int j = 0; j < NT; j++) {
                mma(acc[i][j], a[i], b[j]);
            }
        }
    }
}
// ANCHOR_END: mma

// ANCHOR: signature
extern "C" __global__ void __launch_bounds__(THREADS)
    conv2d_nhwc(const float* input, const float* weight, float* output, int batch, int input_rows,
                int input_cols, int input_channels, int output_channels, int kernel_rows,
                int kernel_cols)
// ANCHOR_END: signature
{
    extern __shared__ float4 shared4[];
    float* shared = (float*)shared4;
    Dims d;
    d.out_rows = input_rows - kernel_rows + 1;
    d.out_cols = input_cols - kernel_cols + 1;
    d.m = batch * d.out_rows * d.out_cols;
    d.k = kernel_rows * kernel_cols * input_channels;
    d.n = output_channels;
    d.ic = input_channels;
    d.kc = kernel_cols;
    d.cols = input_cols;
    d.rows = input_rows;
    int m0 = blockIdx.x * BLOCK_M, n0 = blockIdx.y * BLOCK_N;
    // Where both channel counts are multiples of 4, copies move 16 bytes and each thread finds
    // the windows of its rows of A once; otherwise (wide false) copies move one float each.
    int win[A_ROWS];
#pragma unroll
    for (int r = 0; r < A_ROWS; r++) {
        int m = m0 + threadIdx.x / (BLOCK_K / 4) + r * A_ROW_STEP;
        win[r] = m < d.m ? window(d, m) : -1;
    }
    bool wide = input_channels % 4 == 0 && output_channels % 4 == 0;
    int warp = threadIdx.x / 32, wm = warp / WARPS_N * WARP_M, wn = warp % WARPS_N * WARP_N;

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int q = 0; q < 4; q++)
                acc[i][j][q] = 0.0f;

    // ANCHOR: pipeline
    // STAGES - 1 tiles in flight before the first is used; then, per K tile: wait for the
    // oldest copy (cp.async.wait_group leaves the newer STAGES - 2 groups in flight), one
    // barrier (everyone's copies of this tile have landed, and everyone is done with the stage
    // the next copy overwrites, which was used one iteration ago), start the copy of the tile
    // STAGES - 1 ahead, and compute this one. Every iteration commits a group, empty or not, so
    // the count stays right at the end.
    int tiles = (d.k + BLOCK_K - 1) / BLOCK_K;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles) {
            load_tile(shared + s * A_FLOATS, shared + STAGES * A_FLOATS + s * B_FLOATS, input,
                      weight, d, m0, n0, s * BLOCK_K, wide, win);
        }
        asm volatile("cp.async.commit_group;");
    }
    for (int kt = 0; kt < tiles; kt++) {
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
        __syncthreads();
        int next = kt + STAGES - 1;
        if (next < tiles) {
            int s = next % STAGES;
            load_tile(shared + s * A_FLOATS, shared + STAGES * A_FLOATS + s * B_FLOATS, input,
                      weight, d, m0, n0, next * BLOCK_K, wide, win);
        }
        asm volatile("cp.async.commit_group;");
        int s = kt % STAGES;
        if (n0 + wn < d.n) { // a warp wholly past the last output channel has nothing to do
            compute_tile(acc, shared + s * A_FLOATS, shared + STAGES * A_FLOATS + s * B_FLOATS, wm,
                         wn);
        }
    }
    // ANCHOR_END: pipeline

    // ANCHOR: store
    // Lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each 16 x 8 tile: two
    // neighbouring outputs of one pixel, stored together where the row allows it.
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < MT; i++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int m = m0 + wm + i * 16 + g + 8 * h;
            if (m >= d.m) {
                continue;
            }
            float* row = output + (size_t)m * d.n;
#pragma unroll
            for (int j = 0; j < NT; j++) {
                int n = n0 + wn + j * 8 + 2 * t;
                float x = acc[i][j][2 * h], y = acc[i][j][2 * h + 1];
                if (n + 1 < d.n && d.n % 2 == 0) {
                    *(float2*)&row[n] = make_float2(x, y);
                } else {
                    if (n < d.n) {
                        row[n] = x;
                    }
                    if (n + 1 < d.n) {
                        row[n + 1] = y;
                    }
                }
            }
        }
    }
    // ANCHOR_END: store
}
// ANCHOR_END: solve
