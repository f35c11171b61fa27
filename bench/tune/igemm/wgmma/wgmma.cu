// Puzzle 11 on Hopper's warpgroup tensor-core instruction (wgmma, sm_90a): the tuning version, with
// the knobs of round 10 (bench/tune/igemm/README.md); the solution's Hopper path is its chosen form.
// The product is computed transposed: D^T[OC, M] = W^T[OC, K] x im2col^T[K, M], so that both of
// wgmma's operands are K-major: W^T comes from registers (each thread loads its fragment from a
// [k][oc] tile in shared memory, as mma.sync's A), and im2col^T is a tile of TILE pixel rows of
// 32 floats of K (128 bytes, channels contiguous) in shared memory with the 128-byte swizzle.
#ifndef TILE
#define TILE 256 // pixel columns a block computes (a multiple of 128: one m64n128k8 per 128)
#endif
#ifndef BLOCK_M
#define BLOCK_M (TILE - 8) // pixels a block owns (the row path computes a run of TILE)
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef BASEOFF
#define BASEOFF 0
#endif
#ifndef INFLIGHT
#define INFLIGHT 0 // wgmma groups left pending across the barrier (0 or 1)
#endif
#ifndef GROUP
#define GROUP 1 // the row path: one barrier per slab (all its taps)
#endif
#ifndef TAPS
#define TAPS 3 // the most kernel columns the grouped row path takes
#endif
#ifndef BUSY
#define BUSY 1 // 0: every warpgroup computes (no branch around the wgmma's)
#endif
#ifndef REPEAT
#define REPEAT 1 // timing experiments only: the wgmma's of each tile REPEAT times
#endif
#ifndef FIRST
#define FIRST 0 // 1: a step's wgmma's go out before its copies
#endif
#ifndef WREG
#define WREG 0 // the row path: weight words from global memory into registers
#endif
#ifndef ROT
#define ROT 0 // the row path: each block starts its K walk at another slab
#endif
#ifndef FENCE
#define FENCE 1
#endif
#ifndef WCG
#define WCG 0
#endif
#define BLOCK_N 128 // output channels a block: 2 warpgroups of 64
#define BLOCK_K 32
#define THREADS 256
#define NH (TILE / 128)
#define W_STRIDE (BLOCK_N + 8)
#define A_BYTES (TILE * 128)
#define W_BYTES (BLOCK_K * W_STRIDE * 4)
#define SLAB_ROWS (TILE + 16)
#define SLAB_BYTES (SLAB_ROWS * 128)
#define A_REGION (STAGES * A_BYTES > 2 * SLAB_BYTES ? STAGES * A_BYTES : 2 * SLAB_BYTES)
#define W_TILES (GROUP && 2 * TAPS > STAGES ? 2 * TAPS : STAGES)
#define SHARED_BYTES (A_REGION + W_TILES * W_BYTES + TILE * 4 + 1024)

#define LOOKAHEAD (STAGES - 1 - INFLIGHT) // K steps whose copies are in flight
static_assert(LOOKAHEAD >= 1, "a step in flight");
static_assert(W_BYTES % 1024 == 0 && TILE % 128 == 0 && BLOCK_M <= TILE, "aligned stages");

extern "C" __device__ const int launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};
// d[0..64) += a (64 x 8, registers) x the 8 x 128 tile that `desc` describes; asynchronous.
__device__ __forceinline__ void wgmma128(float* d, const unsigned* a, unsigned long long desc)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                 "{%64, %65, %66, %67}, %68, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

__device__ __forceinline__ void copy_async(unsigned dst, const float* src, bool valid, int bytes,
                                           bool l1 = true)
{
    int n = valid ? bytes : 0;
    if (bytes == 16 && l1) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(n));
    } else if (bytes == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(n));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(n));
    }
}

struct Dims {
    int m, k, n;
    int ic, kc, cols;
    int out_rows, out_cols, rows;
};

__device__ __forceinline__ int pixel(const Dims& d, int m)
{
    int c = m % d.out_cols, r = m / d.out_cols % d.out_rows, b = m / (d.out_cols * d.out_rows);
    return (b * d.rows + r) * d.cols + c;
}

__device__ __forceinline__ int tap(const Dims& d, int k)
{
    int ch = k % d.ic, j = k / d.ic % d.kc, i = k / (d.ic * d.kc);
    return (i * d.cols + j) * d.ic + ch;
}

struct Cursor {
    int k, ch, j, i;
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

// Byte offset of float kk (< 32) of pixel row `row` in a 128-byte-swizzled tile: the 16-byte
// chunk kk / 4 of the row is stored at chunk (kk / 4) ^ (row % 8).
__device__ __forceinline__ unsigned swz(int row, int kk)
{
    return row * 128 + (((kk >> 2) ^ (row & 7)) << 4) + (kk & 3) * 4;
}

#define A_ROW_STEP (THREADS / 8)
#define A_ROWS (TILE / A_ROW_STEP)

__device__ __forceinline__ void load_weight(unsigned sw, const float* weight, const Dims& d, int n0,
                                            int k0, bool wide)
{
    if (wide) {
        int nq = threadIdx.x % (BLOCK_N / 4) * 4;
#pragma unroll
        for (int r = 0; r < BLOCK_K * BLOCK_N / 4 / THREADS; r++) {
            int kk = threadIdx.x / (BLOCK_N / 4) + r * (THREADS / (BLOCK_N / 4));
            bool valid = k0 + kk < d.k && n0 + nq < d.n;
            copy_async(sw + (kk * W_STRIDE + nq) * 4,
                       weight + (valid ? (k0 + kk) * d.n + n0 + nq : 0), valid, 16, !WCG);
        }
    } else {
        for (int e = threadIdx.x; e < BLOCK_K * BLOCK_N; e += THREADS) {
            int kk = e / BLOCK_N, nn = e % BLOCK_N;
            bool valid = k0 + kk < d.k && n0 + nn < d.n;
            copy_async(sw + (kk * W_STRIDE + nn) * 4,
                       weight + (valid ? (k0 + kk) * d.n + n0 + nn : 0), valid, 4);
        }
    }
}

__device__ __forceinline__ void load_tile(unsigned sa, unsigned sw, const float* input,
                                          const float* weight, const Dims& d, int m0, int n0,
                                          int k0, bool wide, const int* win, Cursor& at)
{
    if (wide) {
        int kq = threadIdx.x % 8 * 4, k = at.k;
        int off = k < d.k ? at.offset(d) : 0;
        at.advance(d);
#pragma unroll
        for (int r = 0; r < A_ROWS; r++) {
            int row = threadIdx.x / 8 + r * A_ROW_STEP;
            bool valid = win[r] >= 0 && k < d.k;
            copy_async(sa + swz(row, kq), input + (valid ? win[r] + off : 0), valid, 16);
        }
    } else {
        for (int e = threadIdx.x; e < TILE * BLOCK_K; e += THREADS) {
            int row = e / BLOCK_K, kk = e % BLOCK_K, m = m0 + row, k = k0 + kk;
            bool valid = row < BLOCK_M && m < d.m && k < d.k;
            copy_async(sa + swz(row, kk),
                       input + (valid ? pixel(d, m) * d.ic + tap(d, k) : 0), valid, 4);
        }
    }
    load_weight(sw, weight, d, n0, k0, wide);
}

struct Step {
    int i, c, j, g;
};

// The row path's copies of one step (kernel row i, channel chunk c, kernel column j; g counts
// the slabs begun): at j = 0 the slab of kernel row i, chunk c (span input pixels from
// p0 + i * cols, 32 channels from 32 c) into slab g % 2; always the weight's tile of (i, j, c).
__device__ __forceinline__ void load_step(unsigned slabs, unsigned sw, const float* input,
                                          const float* weight, const Dims& d, int n0, int p0,
                                          int span, Step& at, int chunks, bool with_weight = true)
{
    if (at.j == 0) {
        unsigned slab = slabs + at.g % 2 * SLAB_BYTES;
        const float* src = input + (p0 + at.i * d.cols) * d.ic + at.c * BLOCK_K;
        // Rows past the span (read only for columns that are dropped) are filled with zeros.
        int used = min(TILE + d.kc - 1, SLAB_ROWS);
        for (int e = threadIdx.x; e < used * 8; e += THREADS) {
            int p = e / 8, q = e % 8 * 4;
            copy_async(slab + swz(p, q), src + (p < span ? p * d.ic + q : 0), p < span, 16);
        }
    }
    if (with_weight) {
        load_weight(sw, weight, d, n0, (at.i * d.kc + at.j) * d.ic + at.c * BLOCK_K, true);
    }
    if (++at.j == d.kc) {
        at.j = 0;
        at.g++;
        if (++at.c == chunks) {
            at.c = 0;
            if (++at.i == d.rows - d.out_rows + 1) {
                at.i = 0; // ROT: a block's walk starts at a kernel row of its own, and wraps
            }
        }
    }
}

// The shared-memory matrix descriptor of a K-major, 128-byte-swizzled tile at `addr`: start
// address / 16 (bits 0-13), leading byte offset 16 (unused with this swizzle), stride byte
// offset 1024 (8 rows of 128 bytes; bits 32-45), base offset (bits 49-51), swizzle mode 1 =
// 128 bytes (bits 62-63).
__device__ __forceinline__ unsigned long long descriptor(unsigned addr)
{
    unsigned long long base = BASEOFF ? (addr >> 7) & 7 : 0;
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) |
           (base << 49) | (1ull << 62);
}

// One K tile of 32: the thread's A words from the weight tile at `sw` (W^T rows 2g, 2g + 1 of
// its warp's 16, K columns t, t + 4 of each k8 step), rounded to tf32, then 4 x NH wgmma's on the
// B tile whose pixel row 0 is at `sb` (commit_tile makes a group of those issued, wait_tile
// waits).
__device__ __forceinline__ void compute_tile(float (*acc)[64], const float* sw, unsigned sb, int ocw)
{
    int t = threadIdx.x % 4;
    unsigned a[BLOCK_K / 8][4];
#pragma unroll
    for (int kb = 0; kb < BLOCK_K / 8; kb++) {
        float2 lo = *(const float2*)&sw[(kb * 8 + t) * W_STRIDE + ocw];
        float2 hi = *(const float2*)&sw[(kb * 8 + t + 4) * W_STRIDE + ocw];
        a[kb][0] = __float_as_uint(lo.x) + 0x1000u;
        a[kb][1] = __float_as_uint(lo.y) + 0x1000u;
        a[kb][2] = __float_as_uint(hi.x) + 0x1000u;
        a[kb][3] = __float_as_uint(hi.y) + 0x1000u;
    }
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int rep = 0; rep < REPEAT; rep++)
#pragma unroll
    for (int kb = 0; kb < BLOCK_K / 8; kb++) {
#pragma unroll
        for (int h = 0; h < NH; h++) {
            wgmma128(acc[h], a[kb], descriptor(sb + h * 128 * 128 + kb * 32));
        }
    }
}

__device__ __forceinline__ void commit_tile()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Waits until at most INFLIGHT groups of wgmma's are pending.
__device__ __forceinline__ void wait_tile()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(INFLIGHT) : "memory");
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    conv2d_nhwc(const float* input, const float* weight, float* output, int batch, int input_rows,
                int input_cols, int input_channels, int output_channels, int kernel_rows,
                int kernel_cols)
{
    extern __shared__ float4 shared4[];
    unsigned raw = (unsigned)__cvta_generic_to_shared(shared4);
    unsigned base = (raw + 1023) & ~1023u, wbase = base + A_REGION;
    const float* wgen = (const float*)((char*)shared4 + (wbase - raw)); // wbase, generic
    int* table = (int*)((char*)shared4 + (wbase + W_TILES * W_BYTES - raw));
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
    int mend = min(m0 + BLOCK_M, d.m); // the block's pixels: m0 .. mend
    bool wide = input_channels % 4 == 0 && output_channels % 4 == 0;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int wg = warp / 4;
    bool busy = !BUSY || n0 + wg * 64 < d.n; // a warpgroup wholly past the last output channel idles
    int ocw = wg * 64 + (warp % 4) * 16 + 2 * g;

    float acc[NH][64];
#pragma unroll
    for (int h = 0; h < NH; h++)
#pragma unroll
        for (int q = 0; q < 64; q++)
            acc[h][q] = 0.0f;

    // The row path: the block's pixels are windows whose top-left inputs lie in a run of input
    // pixels p0 .. p0 + TILE (all pixels of the run computed, those that are no window of the
    // block dropped at the store); tap (i, j) of run position v is input pixel
    // p0 + v + i * cols + j, so one slab per kernel row and channel chunk serves all the taps j,
    // shifted by j rows.
    int p0 = pixel(d, m0), plast = pixel(d, mend - 1);
    int span = plast - p0 + d.kc;
    bool rows = ROWS && wide && d.ic % BLOCK_K == 0 &&
                (GROUP ? d.kc <= TAPS : d.kc >= LOOKAHEAD + INFLIGHT) && plast - p0 < TILE &&
                span <= SLAB_ROWS;
    // table[v]: the pixel that D's column v is, or -1.
    for (int v = threadIdx.x; v < TILE; v += THREADS) {
        int m = -1;
        if (rows) {
            int q = p0 + v, c = q % d.cols, r = q / d.cols % d.rows, b = q / (d.cols * d.rows);
            int mm = (b * d.out_rows + r) * d.out_cols + c;
            if (c < d.out_cols && r < d.out_rows && mm >= m0 && mm < mend) {
                m = mm;
            }
        } else if (m0 + v < mend && v < BLOCK_M) {
            m = m0 + v;
        }
        table[v] = m;
    }

#if WREG
    if (rows) {
        // The weight's words straight from global memory into registers, one step ahead; only
        // the slabs go through shared memory.
        int chunks = d.ic / BLOCK_K, steps = kernel_rows * chunks * d.kc;
        Step next = {0, 0, 0, 0}, wat = {0, 0, 0, 0};
        for (int s = 0; s < LOOKAHEAD; s++) {
            if (s < steps) {
                load_step(base, 0, input, weight, d, n0, p0, span, next, chunks, false);
            }
            asm volatile("cp.async.commit_group;");
        }
        bool wok = n0 + ocw < d.n;
        const float* wcol = weight + (wok ? n0 + ocw : 0);
        float2 wn[BLOCK_K / 8][2];
        auto wload = [&](Step& w) {
            int k0 = (w.i * d.kc + w.j) * d.ic + w.c * BLOCK_K;
#pragma unroll
            for (int kb = 0; kb < BLOCK_K / 8; kb++) {
                wn[kb][0] = wok ? *(const float2*)&wcol[(size_t)(k0 + kb * 8 + t) * d.n] : make_float2(0, 0);
                wn[kb][1] = wok ? *(const float2*)&wcol[(size_t)(k0 + kb * 8 + t + 4) * d.n] : make_float2(0, 0);
            }
            if (++w.j == d.kc) {
                w.j = 0;
                if (++w.c == chunks) {
                    w.c = 0;
                    w.i++;
                }
            }
        };
        wload(wat);
        for (int s = 0; s < steps; s++) {
            asm volatile("cp.async.wait_group %0;" ::"n"(LOOKAHEAD - 1) : "memory");
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncthreads();
            unsigned a[BLOCK_K / 8][4];
#pragma unroll
            for (int kb = 0; kb < BLOCK_K / 8; kb++) {
                a[kb][0] = __float_as_uint(wn[kb][0].x) + 0x1000u;
                a[kb][1] = __float_as_uint(wn[kb][0].y) + 0x1000u;
                a[kb][2] = __float_as_uint(wn[kb][1].x) + 0x1000u;
                a[kb][3] = __float_as_uint(wn[kb][1].y) + 0x1000u;
            }
            unsigned sb = base + s / d.kc % 2 * SLAB_BYTES + s % d.kc * 128;
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
            for (int kb = 0; kb < BLOCK_K / 8; kb++) {
#pragma unroll
                for (int h = 0; h < NH; h++) {
                    wgmma128(acc[h], a[kb], descriptor(sb + h * 128 * 128 + kb * 32));
                }
            }
            commit_tile();
            if (s + 1 < steps) {
                wload(wat);
            }
            if (s + LOOKAHEAD < steps) {
                load_step(base, 0, input, weight, d, n0, p0, span, next, chunks, false);
            }
            asm volatile("cp.async.commit_group;");
            wait_tile();
        }
    } else
#endif
#if GROUP
    if (rows) {
        // One barrier per slab: kernel row i, chunk c (group gi = i * chunks + c) copies its slab
        // and the kc weight tiles of its taps while the group before is computed.
        int chunks = d.ic / BLOCK_K, groups = kernel_rows * chunks;
        for (int gi = 0; gi <= groups; gi++) {
            if (gi > 0) {
                asm volatile("cp.async.wait_group 0;" ::: "memory");
                if (FENCE) {
                    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                }
                __syncthreads();
            }
            if (gi < groups) {
                int i = gi / chunks, c = gi % chunks;
                unsigned slab = base + gi % 2 * SLAB_BYTES;
                const float* src = input + (p0 + i * d.cols) * d.ic + c * BLOCK_K;
                int used = min(TILE + d.kc - 1, SLAB_ROWS);
                for (int e = threadIdx.x; e < used * 8; e += THREADS) {
                    int p = e / 8, q = e % 8 * 4;
                    copy_async(slab + swz(p, q), src + (p < span ? p * d.ic + q : 0), p < span, 16);
                }
                for (int j = 0; j < d.kc; j++) {
                    load_weight(wbase + (gi % 2 * TAPS + j) * W_BYTES, weight, d, n0,
                                (i * d.kc + j) * d.ic + c * BLOCK_K, true);
                }
            }
            asm volatile("cp.async.commit_group;");
            if (gi > 0 && busy) {
                int g = gi - 1;
                for (int j = 0; j < d.kc; j++) {
                    compute_tile(acc, wgen + (g % 2 * TAPS + j) * (W_BYTES / 4),
                                 base + g % 2 * SLAB_BYTES + j * 128, ocw);
                }
                commit_tile();
                wait_tile();
            }
        }
    } else
#endif
    if (rows) {
        int chunks = d.ic / BLOCK_K, steps = kernel_rows * chunks * d.kc;
        int first = ROT ? blockIdx.x % (kernel_rows * chunks) : 0; // the (i, c) group to start at
        Step next = {first / chunks, first % chunks, 0, 0};
        for (int s = 0; s < LOOKAHEAD; s++) {
            if (s < steps) {
                load_step(base, wbase + s * W_BYTES, input, weight, d, n0, p0, span, next, chunks);
            }
            asm volatile("cp.async.commit_group;");
        }
        for (int s = 0; s < steps; s++) {
            asm volatile("cp.async.wait_group %0;" ::"n"(LOOKAHEAD - 1) : "memory");
            if (FENCE) {
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            }
            __syncthreads();
            if (FIRST && busy) {
                compute_tile(acc, wgen + s % STAGES * (W_BYTES / 4),
                             base + s / d.kc % 2 * SLAB_BYTES + s % d.kc * 128, ocw);
                commit_tile();
            }
            if (s + LOOKAHEAD < steps) {
                load_step(base, wbase + (s + LOOKAHEAD) % STAGES * W_BYTES, input, weight, d, n0,
                          p0, span, next, chunks);
            }
            asm volatile("cp.async.commit_group;");
            if (!FIRST && busy) {
                compute_tile(acc, wgen + s % STAGES * (W_BYTES / 4),
                             base + s / d.kc % 2 * SLAB_BYTES + s % d.kc * 128, ocw);
                commit_tile();
            }
            if (busy) {
                wait_tile();
            }
        }
    } else {
        int win[A_ROWS];
#pragma unroll
        for (int r = 0; r < A_ROWS; r++) {
            int row = threadIdx.x / 8 + r * A_ROW_STEP, m = m0 + row;
            win[r] = row < BLOCK_M && m < d.m ? pixel(d, m) * d.ic : -1;
        }
        Cursor at;
        at.k = threadIdx.x % 8 * 4;
        at.ch = at.k % d.ic;
        at.j = at.k / d.ic % d.kc;
        at.i = at.k / (d.ic * d.kc);
        int tiles = (d.k + BLOCK_K - 1) / BLOCK_K;
#pragma unroll
        for (int s = 0; s < LOOKAHEAD; s++) {
            if (s < tiles) {
                load_tile(base + s * A_BYTES, wbase + s * W_BYTES, input, weight, d, m0, n0,
                          s * BLOCK_K, wide, win, at);
            }
            asm volatile("cp.async.commit_group;");
        }
        for (int kt = 0; kt < tiles; kt++) {
            asm volatile("cp.async.wait_group %0;" ::"n"(LOOKAHEAD - 1) : "memory");
            if (FENCE) {
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            }
            __syncthreads();
            if (FIRST && busy) {
                int s = kt % STAGES;
                compute_tile(acc, wgen + s * (W_BYTES / 4), base + s * A_BYTES, ocw);
                commit_tile();
            }
            int next = kt + LOOKAHEAD;
            if (next < tiles) {
                int s = next % STAGES;
                load_tile(base + s * A_BYTES, wbase + s * W_BYTES, input, weight, d, m0, n0,
                          next * BLOCK_K, wide, win, at);
            }
            asm volatile("cp.async.commit_group;");
            if (!FIRST && busy) {
                int s = kt % STAGES;
                compute_tile(acc, wgen + s * (W_BYTES / 4), base + s * A_BYTES, ocw);
                commit_tile();
            }
            if (busy) {
                wait_tile();
            }
        }
    }

    if (busy) {
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }

    // Accumulator q of n8 chunk j (acc[h][4j + q]) is D^T row g + 8 (q / 2) of the warp's 16,
    // column 8j + 2t + q % 2: output channel ocw + q / 2, column 128h + 8j + 2t + q % 2.
    if (busy) {
        int oc = n0 + ocw;
#pragma unroll
        for (int h = 0; h < NH; h++) {
#pragma unroll
            for (int j = 0; j < 16; j++) {
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    int m = table[128 * h + 8 * j + 2 * t + e];
                    if (m < 0) {
                        continue;
                    }
                    float* row = output + (size_t)m * d.n;
                    float v0 = acc[h][4 * j + e], v1 = acc[h][4 * j + 2 + e];
                    if (oc + 1 < d.n && d.n % 2 == 0) {
                        *(float2*)&row[oc] = make_float2(v0, v1);
                    } else {
                        if (oc < d.n) row[oc] = v0;
                        if (oc + 1 < d.n) row[oc + 1] = v1;
                    }
                }
            }
        }
    }
}
