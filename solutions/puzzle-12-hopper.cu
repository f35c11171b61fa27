// Puzzle 12: convolution as matrix products, on tensor cores (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// Same contract, cases and tolerance as puzzle 08; declare the launch the same way:
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// ANCHOR: solve
// The Hopper kernel: the reference solution's three products (solutions/puzzle-12.cu, on
// mma.sync) on an H100's warpgroup instruction wgmma (sm_90a), a second checked solution
// (`runner check puzzle-12 --solution=hopper`). Its `split` is that file's, repeated: each
// solution is one file that the runner compiles on its own.
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the Hopper solution needs sm_90a (an H100 or the simulator); solutions/puzzle-12.cu runs on any tensor-core GPU"
#endif


// ANCHOR: split
// A float as a tf32 high part and a tf32 remainder: x = hi + lo up to 2^-22 |x|. hi keeps the top 11
// bits of the significand (rounded); x - hi is exact in float32, and rounding it to tf32 drops bits
// 23 and beyond of x.
__device__ __forceinline__ float tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

__device__ __forceinline__ float4 split_pair(float x0, float x1)
{
    float h0 = tf32(x0), h1 = tf32(x1);
    return make_float4(h0, h1, tf32(x0 - h0), tf32(x1 - h1));
}
// ANCHOR_END: split

// ANCHOR: hopper
// The Hopper path (compiled only for sm_90a, where the runner finds an H100): the same three
// products with the warpgroup instruction wgmma, which reaches about twice mma.sync's rate. A
// warpgroup (4 warps) multiplies a 64 x 8 tile of W from registers by an 8 x NCOLS tile of X that
// it reads from shared memory itself, so a row is now ROW = 64 outputs (b = 0 .. 63, wgmma's M) and
// a warpgroup computes NCOLS rows (its N): Y^T[b][r] = sum over k of W[b][k] X[k][r], as above.
// X[k][r] = x[64 r + k] is read K-major (k contiguous within a row r), in the 128-byte swizzle:
// the inputs are staged as rows of 32 floats, the first half of each 64-input row in one array
// and the second half in another, so that the rows r of every k-step are consecutive rows of one
// array, a descriptor's start moving one row every 8 k-steps.
#define ROW 64
#define NCOLS 96 // 2 warpgroups x 64 x 96 = 12,288 outputs a block: 122 blocks for the full case
#define WGS 2
#define THREADS (128 * WGS)
#define OUTPUTS_PER_BLOCK (ROW * NCOLS * WGS)
// k-steps: W[b][k] = w[k - b] is nonzero for k < kernel_size + 63.
#define STEPS(k) (((k) + ROW - 1 + 7) / 8)
#define MAX_STEPS STEPS(2047)
// Shared memory: the inputs (hi and lo, each as two arrays of 32-float rows, 1024-byte aligned for
// the swizzle), then the taps: per offset d from -72, {w[d], w[d - 8], w[d + 4], w[d - 4]}, the four
// words a lane's A fragment takes at one k-step, hi and lo.
#define X_ROWS ((OUTPUTS_PER_BLOCK + 8 * MAX_STEPS) / ROW + 2)
#define HALF_BYTES ((X_ROWS * 128 + 1023) / 1024 * 1024)
#define TAP_SLOTS (8 * MAX_STEPS + 80)
#define SHARED_BYTES (4 * HALF_BYTES + 2 * TAP_SLOTS * 16 + 1024)

extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};

// The swizzled byte offset of float `col` (< 32) of row `row` in a 128-byte-swizzled array: 16-byte
// chunk q of row r at chunk q ^ (r % 8), as wgmma reads it.
__device__ __forceinline__ unsigned swizzled(int row, int col)
{
    return row * 128 + (((col >> 2) ^ (row & 7)) << 4) + (col & 3) * 4;
}

// The descriptor of a K-major, 128-byte-swizzled operand at shared address `addr`: start / 16,
// leading byte offset 16 (unused by this layout), stride byte offset 1024 (8 rows), swizzle 128B.
__device__ __forceinline__ unsigned long long descriptor(unsigned addr)
{
    return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

// D[0 .. NCOLS / 2) += A B, started (asynchronous): A the warpgroup's 64 x 8 tile of W in registers
// (this thread's four words, in mma.sync's A layout for its warp's 16 rows), B the 8 x NCOLS tile of
// X whose descriptor is `b`.
__device__ __forceinline__ void wgmma_m64n96k8(float* d, const unsigned (&a)[4], unsigned long long b)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %53, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n96k8.f32.tf32.tf32 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29,"
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43,"
                 "%44, %45, %46, %47}, "
                 "{%48, %49, %50, %51}, %52, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                   "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

__device__ __forceinline__ void keep_live(const unsigned (&a)[4])
{
#pragma unroll
    for (int q = 0; q < 4; q++) {
        asm volatile("" ::"r"(a[q]));
    }
}

// Stages the block's inputs x[i], i < span (zeros from valid_inputs on), split into hi and lo, in
// the four swizzled arrays at `xs` (hi first half, hi second half, lo first half, lo second half
// of each 64-input row), and the taps: slot e holds the pair for d = e - 72 (hi in taps[e], lo in
// taps[TAP_SLOTS + e]). Every global load of a thread is issued before its first store.
#define X_LOADS ((OUTPUTS_PER_BLOCK + 8 * MAX_STEPS) / 4 / THREADS + 1)
#define TAP_LOADS ((TAP_SLOTS + THREADS - 1) / THREADS)
__device__ __forceinline__ void stage(char* xs, float4* taps, const float* kernel, int kernel_size,
                                      int tap_slots, const float* input, int valid_inputs, int span)
{
    float4 v[X_LOADS];
#pragma unroll
    for (int u = 0; u < X_LOADS; u++) {
        int p = 4 * (threadIdx.x + u * THREADS);
        if (p + 4 <= valid_inputs && p < span) {
            v[u] = *reinterpret_cast<const float4*>(input + p);
        } else {
            float e[4];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                e[j] = p + j < valid_inputs && p < span ? input[p + j] : 0.0f;
            }
            v[u] = make_float4(e[0], e[1], e[2], e[3]);
        }
    }
    float4 w[TAP_LOADS];
#pragma unroll
    for (int u = 0; u < TAP_LOADS; u++) {
        int d = threadIdx.x + u * THREADS - 72;
        auto tap = [&](int k) { return k >= 0 && k < kernel_size ? kernel[k] : 0.0f; };
        w[u] = make_float4(tap(d), tap(d - 8), tap(d + 4), tap(d - 4));
    }
#pragma unroll
    for (int u = 0; u < X_LOADS; u++) {
        int p = 4 * (threadIdx.x + u * THREADS);
        if (p < span) {
            float4 hi = split_pair(v[u].x, v[u].y), hi2 = split_pair(v[u].z, v[u].w);
            unsigned at = (p % ROW) / 32 * HALF_BYTES + swizzled(p / ROW, p % 32);
            *reinterpret_cast<float4*>(xs + at) = make_float4(hi.x, hi.y, hi2.x, hi2.y);
            *reinterpret_cast<float4*>(xs + 2 * HALF_BYTES + at) = make_float4(hi.z, hi.w, hi2.z, hi2.w);
        }
    }
#pragma unroll
    for (int u = 0; u < TAP_LOADS; u++) {
        int e = threadIdx.x + u * THREADS;
        if (e < tap_slots) {
            float4 a = split_pair(w[u].x, w[u].y), b = split_pair(w[u].z, w[u].w);
            taps[e] = make_float4(a.x, a.y, b.x, b.y);
            taps[TAP_SLOTS + e] = make_float4(a.z, a.w, b.z, b.w);
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    extern __shared__ float4 smem[];
    unsigned raw = (unsigned)__cvta_generic_to_shared(smem);
    unsigned xs = (raw + 1023) & ~1023u;
    char* xg = (char*)smem + (xs - raw);
    float4* taps = (float4*)(xg + 4 * HALF_BYTES);
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * OUTPUTS_PER_BLOCK;
    int steps = STEPS(kernel_size);
    stage(xg, taps, kernel, kernel_size, 8 * steps + 80, input + first, input_size - first,
          OUTPUTS_PER_BLOCK + 8 * steps);
    __syncthreads();

    int warp = threadIdx.x / 32, wg = warp / 4, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    int tile = first + wg * ROW * NCOLS; // the warpgroup's first output
    if (tile >= output_size) {
        return; // the whole warpgroup: nothing of its rows is an output
    }
    float acc[NCOLS / 2], small[NCOLS / 2]; // small: the products with a remainder
#pragma unroll
    for (int q = 0; q < NCOLS / 2; q++) {
        acc[q] = 0.0f;
        small[q] = 0.0f;
        asm volatile("" : "+f"(acc[q]), "+f"(small[q])); // no zeros rematerialized in the loop
    }
    // ANCHOR: hopper_loop
    // k-step s: this thread's A words are the slot of d = 8 s + t - 16 (warp % 4) - g; B is rows
    // wg NCOLS + s / 8 on of the first (s % 8 < 4) or second half array, from float 8 (s % 4).
    // Three products a k-step, committed as one group; one group stays in flight, so each step
    // has A registers of its own (two sets, alternating) until the group that reads them retires.
    const float4* hp = taps + 72 + t - 16 * (warp % 4) - g;
    unsigned rows = xs + wg * NCOLS * 128;
    auto step = [&](int s, unsigned (&hi)[4], unsigned (&lo)[4], const unsigned (&ohi)[4],
                    const unsigned (&olo)[4]) {
        float4 h = hp[8 * s], l = hp[TAP_SLOTS + 8 * s];
        hi[0] = __float_as_uint(h.x), hi[1] = __float_as_uint(h.y);
        hi[2] = __float_as_uint(h.z), hi[3] = __float_as_uint(h.w);
        lo[0] = __float_as_uint(l.x), lo[1] = __float_as_uint(l.y);
        lo[2] = __float_as_uint(l.z), lo[3] = __float_as_uint(l.w);
        unsigned b = rows + s / 8 * 128 + s / 4 % 2 * HALF_BYTES + s % 4 * 32;
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        wgmma_m64n96k8(acc, hi, descriptor(b));
        wgmma_m64n96k8(small, hi, descriptor(b + 2 * HALF_BYTES));
        wgmma_m64n96k8(small, lo, descriptor(b));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        keep_live(ohi); // read by the group just retired: registers of their own till here
        keep_live(olo);
    };
    unsigned h0[4], l0[4], h1[4], l1[4];
    int s = 0;
    for (; s + 1 < steps; s += 2) { // (a step under a condition here would serialize the wgmma's)
        step(s, h0, l0, h1, l1);
        step(s + 1, h1, l1, h0, l0);
    }
    if (s < steps) {
        step(s, h0, l0, h1, l1);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    keep_live(h0);
    keep_live(l0);
    keep_live(h1);
    keep_live(l1);
    // ANCHOR_END: hopper_loop

    // Accumulator q of n8 chunk j is row b = 16 (warp % 4) + g + 8 (q / 2), column r = 8 j + 2 t
    // + q % 2: output tile + 64 r + b.
#pragma unroll
    for (int j = 0; j < NCOLS / 8; j++) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            int o = tile + ROW * (8 * j + 2 * t + q % 2) + 16 * (warp % 4) + g + 8 * (q / 2);
            if (o < output_size) {
                output[o] = acc[4 * j + q] + small[4 * j + q];
            }
        }
    }
}
// ANCHOR_END: hopper
// ANCHOR_END: solve
