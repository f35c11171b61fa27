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
// The mma.sync kernel, for every GPU with tensor cores (compute capability 8.0 on). An H100's own
// warpgroup instructions, TMA copies, mbarriers and a producer warpgroup go further in a second
// checked solution, solutions/puzzle-11-hopper.cu (`runner check puzzle-11 --solution=hopper`).
// (This file names none of sm_90a's instructions, so the runner compiles it for the GPU at hand.)
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
#ifndef BLOCK_K
#define BLOCK_K 32
#endif
// MIN_BLOCKS: blocks per SM the compiler must leave registers for (0: no limit).
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 0
#endif
// FAST_TF32: round to tf32 with one integer add instead of cvt.rna (see tf32 below).
#ifndef FAST_TF32
#define FAST_TF32 1
#endif
// ROWS: the row path where it applies (see `rows` in the kernel); 0: im2col tiles only.
#ifndef ROWS
#define ROWS 1
#endif
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
// The row path keeps two slabs of SLAB_ROWS input pixels x BLOCK_K channels in the place of
// the A stages.
#define SLAB_ROWS (BLOCK_M + 16)
#define SLAB_FLOATS (SLAB_ROWS * A_STRIDE)
#define A_REGION (STAGES * A_FLOATS > 2 * SLAB_FLOATS ? STAGES * A_FLOATS : 2 * SLAB_FLOATS)
#define SHARED_BYTES ((A_REGION + STAGES * B_FLOATS) * 4)

static_assert(BLOCK_M % (16 * WARPS_M) == 0 && BLOCK_N % (8 * WARPS_N) == 0, "whole mma tiles");
static_assert(WARP_N % 32 == 0 && THREADS % (BLOCK_K / 4) == 0, "the loaders' layouts");
static_assert((BLOCK_M * BLOCK_K / 4) % THREADS == 0 && (BLOCK_K * BLOCK_N / 4) % THREADS == 0,
              "every thread copies the same number of 16-byte pieces");

extern "C" __device__ const int launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};
// ANCHOR_END: shape

// ANCHOR: async
// Copies `bytes` (4 or 16) from global to shared memory without passing through registers; with
// `valid` false nothing is read and the destination is filled with zeros. `l1` keeps the line in
// L1 too (16-byte copies only; 4-byte ones always go through L1). The destination is a shared
// memory address `at` or a pointer `dst`.
__device__ __forceinline__ void copy_async(unsigned at, const float* src, bool valid, int bytes,
                                           bool l1 = false)
{
    int n = valid ? bytes : 0;
    if (bytes == 16 && l1) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(at), "l"(src), "r"(n));
    } else if (bytes == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(at), "l"(src), "r"(n));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(at), "l"(src), "r"(n));
    }
}

__device__ __forceinline__ void copy_async(float* dst, const float* src, bool valid, int bytes,
                                           bool l1 = false)
{
    copy_async((unsigned)__cvta_generic_to_shared(dst), src, valid, bytes, l1);
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
__device__ __forceinline__ int pixel(const Dims& d, int m) // the input pixel at window(m)
{
    int c = m % d.out_cols, r = m / d.out_cols % d.out_rows, b = m / (d.out_cols * d.out_rows);
    return (b * d.rows + r) * d.cols + c;
}

__device__ __forceinline__ int window(const Dims& d, int m) { return pixel(d, m) * d.ic; }

__device__ __forceinline__ int tap(const Dims& d, int k)
{
    int ch = k % d.ic, j = k / d.ic % d.kc, i = k / (d.ic * d.kc);
    return (i * d.cols + j) * d.ic + ch;
}

// Where a thread's column of A is in the image: k = ((i * kc) + j) * ic + ch, and the offset of
// tap (i, j), channel ch from a window's top-left input. The copy of each K tile moves it
// BLOCK_K further on, with no division.
struct Cursor {
    int k, ch, j, i;
    // The cursor at column k of K.
    __device__ __forceinline__ static Cursor start(const Dims& d, int k)
    {
        return {k, k % d.ic, k / d.ic % d.kc, k / (d.ic * d.kc)};
    }
    __device__ __forceinline__ int offset(const Dims& d) const { return (i * d.cols + j) * d.ic + ch; }
    __device__ __forceinline__ void advance(const Dims& d)
    {
        k += BLOCK_K;
        ch += BLOCK_K;
        while (ch >= d.ic) {
            ch -= d.ic;
            if (++j == d.kc) {
                j = 0;
                i++;
            }
        }
    }
};
// ANCHOR_END: load

// ANCHOR: load_tile
// weight[k0 .. + BLOCK_K, n0 .. n0 + BLOCK_N], 16 bytes a copy.
__device__ __forceinline__ void load_weight(float* sb, const float* weight, const Dims& d, int n0,
                                            int k0)
{
    int nq = threadIdx.x % (BLOCK_N / 4) * 4;
#pragma unroll
    for (int r = 0; r < BLOCK_K * BLOCK_N / 4 / THREADS; r++) {
        int kk = threadIdx.x / (BLOCK_N / 4) + r * (THREADS / (BLOCK_N / 4));
        bool valid = k0 + kk < d.k && n0 + nq < d.n;
        copy_async(&sb[kk * B_STRIDE + nq], weight + (valid ? (k0 + kk) * d.n + n0 + nq : 0),
                   valid, 16);
    }
}

// A thread's rows of A in the wide copy: row t / (BLOCK_K / 4) + r * A_ROW_STEP, r < A_ROWS.
#define A_ROW_STEP (THREADS / (BLOCK_K / 4))
#define A_ROWS (BLOCK_M / A_ROW_STEP)

__device__ __forceinline__ void load_tile(float* sa, float* sb, const float* input,
                                          const float* weight, const Dims& d, int m0, int n0,
                                          int k0, bool wide, const int* win, Cursor& at)
{
    if (wide) {
        // 16 bytes a copy: the thread copies column quad t % (BLOCK_K / 4) of its A_ROWS rows,
        // whose windows it found once (win[r] < 0: past M); `at` is where that column is.
        int kq = threadIdx.x % (BLOCK_K / 4) * 4, k = at.k;
        int off = k < d.k ? at.offset(d) : 0;
        at.advance(d);
#pragma unroll
        for (int r = 0; r < A_ROWS; r++) {
            int row = threadIdx.x / (BLOCK_K / 4) + r * A_ROW_STEP;
            bool valid = win[r] >= 0 && k < d.k;
            copy_async(&sa[row * A_STRIDE + kq], input + (valid ? win[r] + off : 0), valid, 16, true);
        }
        load_weight(sb, weight, d, n0, k0);
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
// ANCHOR_END: load_tile

// ANCHOR: step
// The row path's copies of one step (kernel row i, channel chunk c, kernel column j; `g`
// counts the slabs begun): at j = 0 the slab of kernel row i, chunk c (span pixels from
// p0 + i * cols, BLOCK_K channels from c * BLOCK_K) into slab g % 2; always the weight's tile
// k0 = (i * kc + j) * ic + c * BLOCK_K. Then `at` moves on to the next step.
struct Step {
    int i, c, j, g;
};

__device__ __forceinline__ void load_step(float* slabs, float* sb, const float* input,
                                          const float* weight, const Dims& d, int n0, int p0,
                                          int span, Step& at, int chunks)
{
    if (at.j == 0) {
        float* slab = slabs + at.g % 2 * SLAB_FLOATS;
        const float* src = input + (p0 + at.i * d.cols) * d.ic + at.c * BLOCK_K;
        for (int e = threadIdx.x; e < span * (BLOCK_K / 4); e += THREADS) {
            int p = e / (BLOCK_K / 4), q = e % (BLOCK_K / 4) * 4;
            copy_async(&slab[p * A_STRIDE + q], src + p * d.ic + q, true, 16, true);
        }
    }
    load_weight(sb, weight, d, n0, (at.i * d.kc + at.j) * d.ic + at.c * BLOCK_K);
    if (++at.j == d.kc) {
        at.j = 0;
        at.g++;
        if (++at.c == chunks) {
            at.c = 0;
            at.i++;
        }
    }
}
// ANCHOR_END: step

// ANCHOR: mma
// float -> tf32 (round to nearest, ties away from zero), as the tensor core's operand. The mma
// reads only the top 19 bits of the word, so adding half of the lowest kept bit (0x1000) to a
// finite float's bits rounds it as cvt.rna.tf32.f32 does, in one instruction instead of two
// (cvt also checks for infinities and NaN, which an add would turn into NaN).
__device__ __forceinline__ unsigned tf32(unsigned bits)
{
#if FAST_TF32
    return bits + 0x1000u;
#else
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(bits)));
    return r;
#endif
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
// gets back exactly its a[0..3]) and the NT B fragments, then MT x NT mma's. Which output
// channel is column g of n tile j is ours to choose: we make it 32 (j / 4) + 4 g + j % 4, so
// that lane (g, t) finds its B words of four tiles side by side, B[t][32h + 4g .. + 4] (one
// 16-byte load; B_STRIDE = 8 mod 32 words puts the 8 lanes of each quarter warp on distinct
// banks), and its accumulators of four tiles are four neighbouring outputs.
// Lane l's ldmatrix row of A tile i is sa's row arow[i] + shift.
__device__ __forceinline__ void compute_tile(float (*acc)[NT][4], const float* sa, const float* sb,
                                             const int* arow, int shift, int wn)
{
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int kb = 0; kb < BLOCK_K; kb += 8) {
        unsigned a[MT][4], b[NT][2];
#pragma unroll
        for (int i = 0; i < MT; i++) {
            int row = arow[i] + shift, col = kb + 4 * (lane / 16);
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
        for (int h = 0; h < NT / 4; h++) {
            const float* col = &sb[(kb + t) * B_STRIDE + wn + 32 * h + 4 * g];
            float4 lo = *(const float4*)col, hi = *(const float4*)(col + 4 * B_STRIDE);
            const float l[4] = {lo.x, lo.y, lo.z, lo.w}, u[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
            for (int q = 0; q < 4; q++) {
                b[4 * h + q][0] = tf32(__float_as_uint(l[q]));
                b[4 * h + q][1] = tf32(__float_as_uint(u[q]));
            }
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
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
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
    bool wide = input_channels % 4 == 0 && output_channels % 4 == 0;
    int warp = threadIdx.x / 32, wm = warp / WARPS_N * WARP_M, wn = warp % WARPS_N * WARP_N;
    bool busy = n0 + wn < d.n; // a warp wholly past the last output channel has nothing to do
    int lane = threadIdx.x % 32, arow[MT]; // the rows of the block's A this lane names to ldmatrix
#pragma unroll
    for (int i = 0; i < MT; i++) {
        arow[i] = wm + i * 16 + lane % 8 + 8 * (lane / 8 % 2);
    }
    float* sb = shared + A_REGION; // the weight's stages

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int q = 0; q < 4; q++)
                acc[i][j][q] = 0.0f;

    // ANCHOR: rows
    // The row path. The block's pixels m0 .. m0 + BLOCK_M are windows whose top-left inputs lie
    // in a run of `span` input pixels from p0 (consecutive, skipping kernel_cols - 1 at the end
    // of each output row). Tap (i, j) of pixel m is input pixel pixel(m) + i * cols + j: for
    // kernel row i, one slab of span pixels from p0 + i * cols holds the A tiles of all the
    // kernel_cols taps, tap j's row of pixel m being slab row pixel(m) - p0 + j. So K is walked
    // as (kernel row i, chunk of BLOCK_K channels, kernel column j): a slab is copied at j = 0
    // (into one of two, alternately) and read kernel_cols times, shifted by j; the weight's tile
    // of (i, j, chunk) goes through the STAGES stages as before. It needs whole chunks of
    // channels, 16-byte copies, a run that fits in a slab (a block whose pixels span two images
    // does not) and kernel_cols >= STAGES - 1 (a slab is not overwritten while in use).
    int p0 = pixel(d, m0), span = pixel(d, min(m0 + BLOCK_M, d.m) - 1) - p0 + d.kc;
    if (ROWS && wide && d.ic % BLOCK_K == 0 && d.kc >= STAGES - 1 && span <= SLAB_ROWS) {
        int srow[MT]; // the slab rows of arow (tap j = 0); past M: any row
#pragma unroll
        for (int i = 0; i < MT; i++) {
            srow[i] = m0 + arow[i] < d.m ? pixel(d, m0 + arow[i]) - p0 : 0;
        }
        int chunks = d.ic / BLOCK_K, steps = kernel_rows * chunks * d.kc;
        Step next = {0, 0, 0, 0}; // the step to copy next
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < steps) {
                load_step(shared, sb + s * B_FLOATS, input, weight, d, n0, p0, span, next, chunks);
            }
            asm volatile("cp.async.commit_group;");
        }
        for (int s = 0; s < steps; s++) {
            asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
            __syncthreads();
            if (s + STAGES - 1 < steps) {
                load_step(shared, sb + (s + STAGES - 1) % STAGES * B_FLOATS, input, weight, d, n0,
                          p0, span, next, chunks);
            }
            asm volatile("cp.async.commit_group;");
            if (busy) {
                compute_tile(acc, shared + s / d.kc % 2 * SLAB_FLOATS, sb + s % STAGES * B_FLOATS,
                             srow, s % d.kc, wn);
            }
        }
        // ANCHOR_END: rows
    } else {
        // Where both channel counts are multiples of 4, copies move 16 bytes and each thread
        // finds the windows of its rows of A once; otherwise (wide false) copies move one float
        // each.
        int win[A_ROWS];
#pragma unroll
        for (int r = 0; r < A_ROWS; r++) {
            int m = m0 + threadIdx.x / (BLOCK_K / 4) + r * A_ROW_STEP;
            win[r] = m < d.m ? window(d, m) : -1;
        }
        Cursor at = Cursor::start(d, threadIdx.x % (BLOCK_K / 4) * 4);

        // ANCHOR: pipeline
        // STAGES - 1 tiles in flight before the first is used; then, per K tile: wait for the
        // oldest copy (cp.async.wait_group leaves the newer STAGES - 2 groups in flight), one
        // barrier (everyone's copies of this tile have landed, and everyone is done with the
        // stage the next copy overwrites, which was used one iteration ago), start the copy of
        // the tile STAGES - 1 ahead, and compute this one. Every iteration commits a group,
        // empty or not, so the count stays right at the end.
        int tiles = (d.k + BLOCK_K - 1) / BLOCK_K;
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < tiles) {
                load_tile(shared + s * A_FLOATS, sb + s * B_FLOATS, input, weight, d, m0, n0,
                          s * BLOCK_K, wide, win, at);
            }
            asm volatile("cp.async.commit_group;");
        }
        for (int kt = 0; kt < tiles; kt++) {
            asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
            __syncthreads();
            int next = kt + STAGES - 1;
            if (next < tiles) {
                int s = next % STAGES;
                load_tile(shared + s * A_FLOATS, sb + s * B_FLOATS, input, weight, d, m0, n0,
                          next * BLOCK_K, wide, win, at);
            }
            asm volatile("cp.async.commit_group;");
            int s = kt % STAGES;
            if (busy) {
                compute_tile(acc, shared + s * A_FLOATS, sb + s * B_FLOATS, arow, 0, wn);
            }
        }
        // ANCHOR_END: pipeline
    }

    // ANCHOR: store
    // Lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each 16 x 8 tile; with the
    // channel order of compute_tile, tiles 4h .. 4h + 3 of a row are output channels
    // 32h + 8t .. + 8: eight neighbouring outputs of one pixel, stored 4 at a time where the row
    // allows it.
    int g = lane / 4, t = lane % 4;
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
            for (int q = 0; q < NT / 4 * 2; q++) { // channels n .. n + 4 of the pixel
                int n = n0 + wn + 32 * (q / 2) + 8 * t + 4 * (q % 2), j = 4 * (q / 2);
                float v[4];
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    v[e] = acc[i][j + e][2 * h + q % 2];
                }
                if (n + 3 < d.n && d.n % 4 == 0) {
                    *(float4*)&row[n] = make_float4(v[0], v[1], v[2], v[3]);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        if (n + e < d.n) {
                            row[n + e] = v[e];
                        }
                    }
                }
            }
        }
    }
    // ANCHOR_END: store
}
// ANCHOR_END: solve
