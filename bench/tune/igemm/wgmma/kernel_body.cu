
__device__ __forceinline__ void copy_async(unsigned dst, const float* src, bool valid, int bytes)
{
    int n = valid ? bytes : 0;
    if (bytes == 16) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(n));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(n));
    }
}

struct Dims {
    int m, k, n;
    int ic, kc, cols;
    int out_rows, out_cols, rows;
};

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
#define A_ROWS (BLOCK_M / A_ROW_STEP)

__device__ __forceinline__ void load_tile(unsigned stage, const float* input, const float* weight,
                                          const Dims& d, int m0, int n0, int k0, bool wide,
                                          const int* win, Cursor& at)
{
    unsigned sa = stage, sw = stage + A_BYTES;
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
        int nq = threadIdx.x % (BLOCK_N / 4) * 4;
#pragma unroll
        for (int r = 0; r < BLOCK_K * BLOCK_N / 4 / THREADS; r++) {
            int kk = threadIdx.x / (BLOCK_N / 4) + r * (THREADS / (BLOCK_N / 4));
            bool valid = k0 + kk < d.k && n0 + nq < d.n;
            copy_async(sw + (kk * W_STRIDE + nq) * 4,
                       weight + (valid ? (k0 + kk) * d.n + n0 + nq : 0), valid, 16);
        }
    } else {
        for (int e = threadIdx.x; e < BLOCK_M * BLOCK_K; e += THREADS) {
            int row = e / BLOCK_K, kk = e % BLOCK_K, m = m0 + row, k = k0 + kk;
            bool valid = m < d.m && k < d.k;
            copy_async(sa + swz(row, kk), input + (valid ? window(d, m) + tap(d, k) : 0), valid, 4);
        }
        for (int e = threadIdx.x; e < BLOCK_K * BLOCK_N; e += THREADS) {
            int kk = e / BLOCK_N, nn = e % BLOCK_N;
            bool valid = k0 + kk < d.k && n0 + nn < d.n;
            copy_async(sw + (kk * W_STRIDE + nn) * 4,
                       weight + (valid ? (k0 + kk) * d.n + n0 + nn : 0), valid, 4);
        }
    }
}

// The shared-memory matrix descriptor of a K-major, 128-byte-swizzled tile at `addr`: start
// address / 16 (bits 0-13), leading byte offset 16 (unused with this swizzle), stride byte
// offset 1024 (8 rows of 128 bytes; bits 32-45), swizzle mode 1 = 128 bytes (bits 62-63).
__device__ __forceinline__ unsigned long long descriptor(unsigned addr)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    conv2d_nhwc(const float* input, const float* weight, float* output, int batch, int input_rows,
                int input_cols, int input_channels, int output_channels, int kernel_rows,
                int kernel_cols)
{
    extern __shared__ float4 shared4[];
    unsigned base = ((unsigned)__cvta_generic_to_shared(shared4) + 1023) & ~1023u;
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
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int wg = warp / 4;
    bool busy = n0 + wg * 64 < d.n; // a warpgroup wholly past the last output channel idles
    // This thread's A words: W^T rows 2g and 2g + 1 of its warp's 16 (output channels
    // oc = n0 + 64 wg + 16 (warp % 4) + 2g + {0, 1}), K columns t and t + 4 of each k8 step.
    int ocw = wg * 64 + (warp % 4) * 16 + 2 * g;

    int win[A_ROWS];
#pragma unroll
    for (int r = 0; r < A_ROWS; r++) {
        int m = m0 + threadIdx.x / 8 + r * A_ROW_STEP;
        win[r] = m < d.m ? window(d, m) : -1;
    }
    Cursor at;
    at.k = threadIdx.x % 8 * 4;
    at.ch = at.k % d.ic;
    at.j = at.k / d.ic % d.kc;
    at.i = at.k / (d.ic * d.kc);

    float acc[NH][64];
#pragma unroll
    for (int h = 0; h < NH; h++)
#pragma unroll
        for (int q = 0; q < 64; q++)
            acc[h][q] = 0.0f;

    int tiles = (d.k + BLOCK_K - 1) / BLOCK_K;
#pragma unroll
    for (int s = 0; s < LOOKAHEAD; s++) {
        if (s < tiles) {
            load_tile(base + s * STAGE_BYTES, input, weight, d, m0, n0, s * BLOCK_K, wide, win, at);
        }
        asm volatile("cp.async.commit_group;");
    }
    for (int kt = 0; kt < tiles; kt++) {
        asm volatile("cp.async.wait_group %0;" ::"n"(LOOKAHEAD - 1) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        int next = kt + LOOKAHEAD;
        if (next < tiles) {
            load_tile(base + next % STAGES * STAGE_BYTES, input, weight, d, m0, n0, next * BLOCK_K,
                      wide, win, at);
        }
        asm volatile("cp.async.commit_group;");
        if (busy) {
            unsigned stage = base + kt % STAGES * STAGE_BYTES;
            const float* sw = (const float*)((char*)shared4 + (stage - (unsigned)__cvta_generic_to_shared(shared4)) + A_BYTES);
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
            for (int kb = 0; kb < BLOCK_K / 8; kb++) {
#pragma unroll
                for (int h = 0; h < NH; h++) {
                    wgmma128(acc[h], a[kb], descriptor(stage + h * 128 * 128 + kb * 32));
                }
            }
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(INFLIGHT) : "memory");
        }
    }
    if (busy) {
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }

    // Accumulator q of n8 chunk j (acc[h][4j + q]) is D^T row g + 8 (q / 2) of the warp's 16,
    // column 8j + 2t + q % 2: output channel ocw + q / 2, pixel 128h + 8j + 2t + q % 2.
    if (busy) {
        int oc = n0 + ocw;
#pragma unroll
        for (int h = 0; h < NH; h++) {
#pragma unroll
            for (int j = 0; j < 16; j++) {
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    int m = m0 + 128 * h + 8 * j + 2 * t + e;
                    if (m >= d.m) {
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
