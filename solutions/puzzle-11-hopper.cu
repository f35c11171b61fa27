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
// The Hopper kernel: puzzle 11 on an H100's own instructions (sm_90a): wgmma, copies by the TMA
// unit, mbarriers, a producer warpgroup, persistent blocks. The kernel a learner reads first is
// solutions/puzzle-11.cu, on mma.sync; this one is the second checked solution
// (`runner check puzzle-11 --solution=hopper`). Its copies' helpers (`async`, `load`) are that
// file's, repeated: each solution is one file that the runner compiles on its own.
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the Hopper solution needs sm_90a (an H100 or the simulator); solutions/puzzle-11.cu runs on any tensor-core GPU"
#endif
// TMA: the Hopper unit walk's copies by the TMA unit (`tma` below), on unless -DTMA=0, through
// two tensor maps the file declares and the runner encodes with the driver (see the chapter);
// with TMA 0 the copies are cp.async, and blocks of more than 64 output channels take the row
// path instead of the walk (the walk with cp.async is slower).
#ifndef TMA
#define TMA 1
#endif
#if TMA
// ANCHOR: tensor_maps
// The tensor maps the copies read: the runner encodes each entry of `tensor_maps` with the
// driver (cuTensorMapEncodeTiled) over its argument's buffer, for the case's sizes, and writes
// it into the global of that name before the launch. Sizes go innermost (contiguous) first,
// as the copies' coordinates do: the input as [pixels][channels] in boxes of 136 pixels (two a
// slab of SLAB_ROWS) x 32 channels, 128-byte swizzled; the weight as [K][output channels] in
// boxes of 32 k (BLOCK_K) x 16 channels, 64-byte swizzled.
// Only cases whose channels fill whole boxes take the walk, so only theirs are encoded
// (`when`): elsewhere a row of 3 channels, say, is 12 bytes, which no map can stride.
__device__ __align__(64) unsigned char input_map[128], weight_map[128];
extern "C" __device__ const char tensor_maps[] =
    "input_map: input, dims {input_channels, batch * input_rows * input_cols}, box {32, 136},"
    " swizzle 128, when input_channels % 32 == 0 && output_channels % 4 == 0;"
    "weight_map: weight, dims {output_channels, kernel_rows * kernel_cols * input_channels},"
    " box {16, 32}, swizzle 64, when input_channels % 32 == 0 && output_channels % 4 == 0;";
// ANCHOR_END: tensor_maps
#endif
// ANCHOR: hopper_shape
// The Hopper path (compiled only for sm_90a, an H100's own target): the warpgroup
// tensor-core instruction wgmma, which multiplies a 64 x 8 tile by an 8 x N one, N up to 256,
// reading B (and optionally A) from shared memory itself. For tf32 both operands must be K-major
// (K contiguous), so the product is computed transposed: D^T[OC, M] = W^T[OC, K] x A^T[K, M].
// A^T's columns are im2col rows, channels contiguous: K-major already. W^T comes from registers
// (each thread reads its words from a [k][oc] tile, as mma.sync's A fragment), so the HWIO weight
// needs no transpose. A block is two warpgroups that multiply, one per 64 output channels, over a
// run of TILE = 256 pixel columns (one m64n256k8 per k8 step), 128 accumulators a thread, and
// (in the row path) a third that only copies, the producer.
#define TILE 256
#define BLOCK_M (TILE - 8) // pixels a block owns (the row path computes a run of TILE)
#define BLOCK_N 128
#define BLOCK_K 32
#define STAGES 4     // the im2col path's stages (the two warpgroups copy and multiply)
#define ROW_STAGES 6 // the row path's weight tiles in flight (the producer fills them)
#define NSLAB 3      // the row path's slabs
#define CTHREADS 256 // the warpgroups that multiply
#define THREADS (CTHREADS + 128)
#define MIN_BLOCKS 1
#define W_STRIDE (BLOCK_N + 8) // floats; bank-conflict free 8-byte fragment loads
#define A_BYTES (TILE * 128)  // an im2col tile: TILE rows of 32 floats
#define W_BYTES (BLOCK_K * W_STRIDE * 4)
#define SLAB_ROWS (TILE + 16)
#define SLAB_BYTES (SLAB_ROWS * 128)
// The two paths' layouts of the same shared memory: slabs then weight tiles; im2col tiles then
// weight tiles.
#define ROWS_BYTES (NSLAB * SLAB_BYTES + ROW_STAGES * W_BYTES)
#define IM_BYTES (STAGES * (A_BYTES + W_BYTES))
#define REGION (ROWS_BYTES > IM_BYTES ? ROWS_BYTES : IM_BYTES)
// + the table of output pixels, the mbarriers, + 1024 to align the tiles to the swizzle's 1024
// bytes
#define SHARED_BYTES (REGION + TILE * 4 + 16 * ROW_STAGES + 1024)

static_assert(W_BYTES % 1024 == 0 && A_BYTES % 1024 == 0 && SLAB_BYTES % 1024 == 0,
              "tiles stay 1024-byte aligned");
static_assert(TILE == 256, "one m64n256k8 a k8 step covers the tile");

extern "C" __device__ const int launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};


// ANCHOR: async
// Copies `bytes` (4 or 16) from global to shared memory without passing through registers; with
// `valid` false nothing is read and the destination is filled with zeros. `l1` keeps the line in
// L1 too (16-byte copies only; 4-byte ones always go through L1). The destination is a shared
// memory address `at` (the Hopper path computes those) or a pointer `dst`.
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

// ANCHOR: hopper
// ANCHOR: swizzle
// The 128-byte swizzle: a tile row is 128 bytes (32 floats of K), and its 16-byte chunk q is
// stored at chunk q ^ (row % 8), so that the 8 rows a wgmma reads together hit all 32 banks. The
// hardware undoes it on the address bits, so a descriptor may start at any row of a slab.
__device__ __forceinline__ unsigned swizzled(int row, int kk)
{
    return row * 128 + (((kk >> 2) ^ (row & 7)) << 4) + (kk & 3) * 4;
}

// The descriptor of a K-major, 128-byte-swizzled tile at shared address `addr`: start address
// / 16 (bits 0-13), leading byte offset 16 (unused by this layout), stride byte offset 1024 (from
// one 8-row group to the next; bits 32-45), swizzle mode 1 = 128 bytes (bits 62-63).
__device__ __forceinline__ unsigned long long descriptor(unsigned addr)
{
    unsigned long long start = (addr & 0x3FFFF) >> 4;
    return start | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// ANCHOR_END: swizzle

// d[0 .. 128) += A x B: A the warpgroup's 64 x 8 tile of W^T in registers (this thread's four
// words, in mma.sync's A layout for its warp's 16 rows), B the 8 x 256 tile of im2col^T whose
// shared-memory descriptor is `b`. Asynchronous: it only starts the product.
__device__ __forceinline__ void wgmma_m64n256k8(float* d, const unsigned* a, unsigned long long b)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5,"
                 "%6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21,"
                 "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37,"
                 "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53,"
                 "%54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69,"
                 "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85,"
                 "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100,"
                 "%101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113,"
                 "%114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126,"
                 "%127}, "
                 "{%128, %129, %130, %131}, %132, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                   "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
                   "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
                   "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
                   "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
                   "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
                   "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
                   "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]),
                   "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),
                   "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
                   "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
                   "+f"(d[127])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// weight[k0 .. + BLOCK_K, n0 .. + BLOCK_N] into a [k][oc] tile of W_STRIDE floats a row, by N
// threads (this one is `tid`); zeros past K and N. L2 only (.cg): every block reads the same
// weight tiles.
template <int N>
__device__ __forceinline__ void load_weight(unsigned sw, const float* weight, const Dims& d, int n0,
                                            int k0, bool wide, int tid)
{
    if (wide) {
        int nq = tid % (BLOCK_N / 4) * 4;
#pragma unroll
        for (int r = 0; r < BLOCK_K * BLOCK_N / 4 / N; r++) {
            int kk = tid / (BLOCK_N / 4) + r * (N / (BLOCK_N / 4));
            bool valid = k0 + kk < d.k && n0 + nq < d.n;
            copy_async(sw + (kk * W_STRIDE + nq) * 4,
                       weight + (valid ? (k0 + kk) * d.n + n0 + nq : 0), valid, 16, false);
        }
    } else {
        for (int e = tid; e < BLOCK_K * BLOCK_N; e += N) {
            int kk = e / BLOCK_N, nn = e % BLOCK_N;
            bool valid = k0 + kk < d.k && n0 + nn < d.n;
            copy_async(sw + (kk * W_STRIDE + nn) * 4,
                       weight + (valid ? (k0 + kk) * d.n + n0 + nn : 0), valid, 4);
        }
    }
}

// A thread's rows of the im2col tile in the wide copy: row t / 8 + r * A_ROW_STEP, r < A_ROWS.
#define A_ROW_STEP (CTHREADS / 8)
#define A_ROWS (TILE / A_ROW_STEP)

// The im2col path's copy of K tile k0: rows m0 .. m0 + BLOCK_M of A (zeros past them and past
// K), swizzled, and the weight's tile.
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
            copy_async(sa + swizzled(row, kq), input + (valid ? win[r] + off : 0), valid, 16,
                       true);
        }
    } else {
        for (int e = threadIdx.x; e < TILE * BLOCK_K; e += CTHREADS) {
            int row = e / BLOCK_K, kk = e % BLOCK_K, m = m0 + row, k = k0 + kk;
            bool valid = row < BLOCK_M && m < d.m && k < d.k;
            copy_async(sa + swizzled(row, kk),
                       input + (valid ? pixel(d, m) * d.ic + tap(d, k) : 0), valid, 4);
        }
    }
    load_weight<CTHREADS>(sw, weight, d, n0, k0, wide, threadIdx.x);
}

struct Step {
    int i, c, j, g;
    // On to the next step: the next kernel column, and after the last one the next slab.
    __device__ __forceinline__ void advance(int kc, int chunks)
    {
        if (++j == kc) {
            j = 0;
            g++;
            if (++c == chunks) {
                c = 0;
                i++;
            }
        }
    }
};

// The row path's copies of one step (kernel row i, channel chunk c, kernel column j; g counts
// the slabs begun), by the N threads of the producer (`tid` < N), as the mma.sync path's: at
// j = 0 the slab of kernel row i, chunk c (span input pixels from p0 + i * cols; the rows after
// them that the last taps read, zeros) into slab g % NSLAB; always the weight's tile of (i, j, c).
template <int N>
__device__ __forceinline__ void load_step(unsigned slabs, unsigned sw, const float* input,
                                          const float* weight, const Dims& d, int n0, int p0,
                                          int span, Step& at, int chunks, int tid)
{
    if (at.j == 0) {
        unsigned slab = slabs + at.g % NSLAB * SLAB_BYTES;
        const float* src = input + (p0 + at.i * d.cols) * d.ic + at.c * BLOCK_K;
        int used = min(TILE + d.kc - 1, SLAB_ROWS);
        for (int e = tid; e < used * 8; e += N) {
            int p = e / 8, q = e % 8 * 4;
            copy_async(slab + swizzled(p, q), src + (p < span ? p * d.ic + q : 0), p < span, 16,
                       true);
        }
    }
    load_weight<N>(sw, weight, d, n0, (at.i * d.kc + at.j) * d.ic + at.c * BLOCK_K, true, tid);
    at.advance(d.kc, chunks);
}

// ANCHOR: wgmma
// One K tile: the thread's words of W^T from the weight tile `sw` (rows 2g and 2g + 1 of its
// warp's 16, that is output channels ocw and ocw + 1; K columns t and t + 4 of each k8 step:
// two 8-byte loads), rounded to tf32 as the mma.sync path does, then the four wgmma's (one a
// k8 step) on the B tile whose pixel row 0 is at `sb`, committed as one group. B is not rounded:
// the tensor core reads the top 19 bits of each float (truncation), within the tolerance (see
// the chapter).
__device__ __forceinline__ void load_a(unsigned (&a)[BLOCK_K / 8][4], const float* sw, int ocw)
{
    int t = threadIdx.x % 4;
#pragma unroll
    for (int kb = 0; kb < BLOCK_K / 8; kb++) {
        float2 lo = *(const float2*)&sw[(kb * 8 + t) * W_STRIDE + ocw];
        float2 hi = *(const float2*)&sw[(kb * 8 + t + 4) * W_STRIDE + ocw];
        a[kb][0] = __float_as_uint(lo.x) + 0x1000u;
        a[kb][1] = __float_as_uint(lo.y) + 0x1000u;
        a[kb][2] = __float_as_uint(hi.x) + 0x1000u;
        a[kb][3] = __float_as_uint(hi.y) + 0x1000u;
    }
}

__device__ __forceinline__ void issue(float* acc, const unsigned (&a)[BLOCK_K / 8][4], unsigned sb)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kb = 0; kb < BLOCK_K / 8; kb++) {
        wgmma_m64n256k8(acc, a[kb], descriptor(sb + kb * 32));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void start_tile(float* acc, const float* sw, unsigned sb, int ocw)
{
    unsigned a[BLOCK_K / 8][4];
    load_a(a, sw, ocw);
    issue(acc, a, sb);
}

__device__ __forceinline__ void finish_tile()
{
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
// ANCHOR_END: wgmma

// Everyone's copies of the oldest stage have landed and are visible to the tensor cores (the
// async proxy), and everyone is done with the stage the next copy overwrites.
__device__ __forceinline__ void stage_ready()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("bar.sync 1, %0;" ::"n"(CTHREADS) : "memory"); // the consumers only
}

// mbarriers: an 8-byte object in shared memory at `bar`.
__device__ __forceinline__ void mbar_init(unsigned bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}" ::"r"(bar)
                 : "memory");
}

// Arrives once this thread's earlier cp.async copies have landed.
__device__ __forceinline__ void mbar_arrive_copies(unsigned bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, int parity)
{
    asm volatile("{\n.reg .pred p;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra WAIT_%=;\n}" ::"r"(bar), "r"(parity) : "memory");
}

#if TMA

__device__ __forceinline__ void tma_load(unsigned dst, const void* map, int x, int y, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}

// ANCHOR: tma
// Before its first copy the thread that copies acquires both maps: the runner wrote them with a
// host copy, outside the kernel, and the CUDA programming guide asks a kernel that reads a
// tensor map in global memory written that way for this fence, at system scope.
__device__ __forceinline__ void acquire_tensor_maps()
{
    asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(input_map) : "memory");
    asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(weight_map) : "memory");
}
// ANCHOR_END: tma

// The weight tile in the TMA layout: 8 groups of 16 output channels, each BLOCK_K rows of 64
// bytes, 64-byte swizzled (16-byte chunk q of row r at q ^ (r / 2 % 4)).
__device__ __forceinline__ void load_a_tma(unsigned (&a)[BLOCK_K / 8][4], const float* sw, int warp)
{
    int t = threadIdx.x % 4, g = threadIdx.x % 32 / 4;
    const float* grp = sw + (warp % 8) * (BLOCK_K * 16);
#pragma unroll
    for (int kb = 0; kb < BLOCK_K / 8; kb++) {
        int r0 = kb * 8 + t, r1 = r0 + 4;
        float2 lo = *(const float2*)&grp[r0 * 16 + (((g / 2) ^ (r0 / 2 % 4)) * 4) + (2 * g) % 4];
        float2 hi = *(const float2*)&grp[r1 * 16 + (((g / 2) ^ (r1 / 2 % 4)) * 4) + (2 * g) % 4];
        a[kb][0] = __float_as_uint(lo.x) + 0x1000u;
        a[kb][1] = __float_as_uint(lo.y) + 0x1000u;
        a[kb][2] = __float_as_uint(hi.x) + 0x1000u;
        a[kb][3] = __float_as_uint(hi.y) + 0x1000u;
    }
}
#endif

// Output channels oc and oc + 1 of a pixel's row: 8 bytes at once where they are both there
// and aligned.
__device__ __forceinline__ void store_pair(float* row, int oc, int n, float v0, float v1)
{
    if (oc + 1 < n && n % 2 == 0) {
        *(float2*)&row[oc] = make_float2(v0, v1);
    } else {
        row[oc] = v0;
        if (oc + 1 < n) {
            row[oc + 1] = v1;
        }
    }
}

// An empty use of A's words: they keep registers of their own until here.
__device__ __forceinline__ void keep_live(const unsigned (&a)[BLOCK_K / 8][4])
{
#pragma unroll
    for (int kb = 0; kb < BLOCK_K / 8; kb++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            asm volatile("" ::"r"(a[kb][q]));
}


// ANCHOR: walk
// The unit walk. The block is persistent: the first %nsmid blocks walk units of TILE input
// positions (unit u: image u / per_image, positions q = r * cols + c from u % per_image * TILE;
// a unit never spans two images, so every unit takes the slab-and-shift copies), and the rest
// return at once. The producer fills one ring, unit after unit, with the row path's steps (a
// weight tile, and at a slab's first step the slab), into the row path's shared memory. Where a
// block's column has 64 output channels or fewer (TOGETHER false, the ping-pong), the two
// warpgroups take the units in turn, each a whole unit over the 64 channels: one multiplies its
// unit while the other stores the unit before. Where it has more (TOGETHER), both warpgroups
// take every unit, 64 channels each, as in the row path.
__device__ __forceinline__ void load_weight_half(unsigned sw, const float* weight, const Dims& d,
                                                 int n0, int k0, int tid)
{
    int nq = tid % 16 * 4; // weight[k0 .. + BLOCK_K, n0 .. n0 + 64], zeros past N
#pragma unroll
    for (int r = 0; r < BLOCK_K * 64 / 4 / 128; r++) {
        int kk = tid / 16 + r * 8;
        bool valid = n0 + nq < d.n;
        copy_async(sw + (kk * W_STRIDE + nq) * 4,
                   weight + (valid ? (k0 + kk) * d.n + n0 + nq : 0), valid, 16, false);
    }
}

template <bool TOGETHER>
__device__ __forceinline__ void walk(const float* input, const float* weight, float* output,
                                     const Dims& d, int batch, int kernel_rows, unsigned raw,
                                     unsigned base, const float4* shared4)
{
    // Together only with TMA copies: with cp.async the row path is faster (the choice below).
    static_assert(TMA || !TOGETHER, "the walk together copies by TMA");
    unsigned nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    int stride = min((int)gridDim.x, (int)nsm);
    if ((int)blockIdx.x >= stride) {
        return; // the persistent blocks take this block's pixels
    }
    int n0 = blockIdx.y * BLOCK_N;
    int per_image = (d.out_rows * d.cols + TILE - 1) / TILE;
    int units = (batch * per_image - blockIdx.x + stride - 1) / stride; // this block's
    int chunks = d.ic / BLOCK_K, steps = kernel_rows * chunks * d.kc;
#if !TMA
    long long pixels = (long long)batch * d.rows * d.cols; // zeros past the last image
#endif
    unsigned rw = base + NSLAB * SLAB_BYTES; // the weight tiles
    const float* rwgen = (const float*)((const char*)shared4 + (rw - raw));
    unsigned bars = base + REGION + TILE * 4;
    int warp = threadIdx.x / 32;
    // full[s] (bars + 8 s) and empty[s] (bars + 8 (ROW_STAGES + s)), as in the row path; in the
    // ping-pong a stage is emptied by the one warpgroup that multiplied it: 128 arrivals.
    if (threadIdx.x == 0) {
        for (int st = 0; st < ROW_STAGES; st++) {
            mbar_init(bars + 8 * st, TMA ? 1 : 128);
            mbar_init(bars + 8 * (ROW_STAGES + st), TOGETHER ? CTHREADS : 128);
        }
    }
    __syncthreads();

    if (warp >= CTHREADS / 32) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        int tid = threadIdx.x - CTHREADS;
#if TMA
        if (tid != 0) {
            return;
        }
        acquire_tensor_maps();
#endif
        // The ring's step S is step s of the block's unit e, S = e * steps + s; slab G % NSLAB
        // is the G-th slab begun.
#pragma unroll 1
        for (int e = 0, S = 0, G = 0; e < units; e++) {
            int u = blockIdx.x + e * stride;
            long long p0 = (long long)(u / per_image) * d.rows * d.cols + u % per_image * TILE;
            Step at = {0, 0, 0, 0};
#pragma unroll 1
            for (int s = 0; s < steps; s++, S++) {
                unsigned full = bars + 8 * (S % ROW_STAGES), empty = full + 8 * ROW_STAGES;
                if (S >= ROW_STAGES) {
                    mbar_wait(empty, (S / ROW_STAGES - 1) & 1);
                }
                unsigned sw = rw + S % ROW_STAGES * W_BYTES;
                long long y = p0 + (long long)at.i * d.cols; // the slab's first input pixel
                bool begins = at.j == 0;                     // the step begins a slab
                int k0 = (at.i * d.kc + at.j) * d.ic + at.c * BLOCK_K;
#if TMA
                constexpr int BOXES = TOGETHER ? BLOCK_N / 16 : 4; // of 16 channels
                unsigned bytes = BLOCK_K * 16 * BOXES * 4 + (begins ? SLAB_BYTES : 0);
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full), "r"(bytes) : "memory");
                if (begins) {
                    unsigned slab = base + G++ % NSLAB * SLAB_BYTES;
                    tma_load(slab, input_map, at.c * BLOCK_K, (int)y, full);
                    tma_load(slab + SLAB_BYTES / 2, input_map, at.c * BLOCK_K, (int)y + SLAB_ROWS / 2, full);
                }
#pragma unroll
                for (int q = 0; q < BOXES; q++) {
                    tma_load(sw + q * BLOCK_K * 64, weight_map, n0 + 16 * q, k0, full);
                }
#else
                if (begins) { // zeros past the last image
                    unsigned slab = base + G++ % NSLAB * SLAB_BYTES;
                    const float* src = input + y * d.ic + at.c * BLOCK_K;
                    int used = min(TILE + d.kc - 1, SLAB_ROWS);
                    for (int x = tid; x < used * 8; x += 128) {
                        int p = x / 8, q = x % 8 * 4;
                        bool valid = y + p < pixels;
                        copy_async(slab + swizzled(p, q), src + (valid ? p * d.ic + q : 0), valid,
                                   16, true);
                    }
                }
                load_weight_half(sw, weight, d, n0, k0, tid);
                mbar_arrive_copies(full);
#endif
                at.advance(d.kc, chunks);
            }
        }
#if !TMA
        asm volatile("cp.async.wait_all;" ::: "memory");
#endif
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");

    // In the ping-pong warpgroup w takes the block's units w, w + 2, ... Before unit e it waits
    // on named barrier 3 - w until the other warpgroup has started every product of unit e - 1:
    // a wait on an mbarrier's phase parity is right only within one round of the ring, and it
    // keeps the two warpgroups' products taking turns. Together, both take every unit.
    int w = warp / 4, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    int ocl = (TOGETHER ? w * 64 : 0) + warp % 4 * 16 + 2 * g; // output channels n0 + ocl, + 1
    float acc[TILE / 2];
    unsigned a0[BLOCK_K / 8][4], a1[BLOCK_K / 8][4];
#pragma unroll 1
    for (int e = TOGETHER ? 0 : w; e < units; e += TOGETHER ? 1 : 2) {
#pragma unroll
        for (int q = 0; q < TILE / 2; q++) {
            acc[q] = 0.0f;
            asm volatile("" : "+f"(acc[q]));
        }
        if (!TOGETHER && e > 0) {
            asm volatile("bar.sync %0, 256;" ::"r"(3 - w) : "memory");
        }
        // The row path's step loop (below, in the kernel) with ring steps S0 + s. Made one
        // function for both paths, it changed how ptxas scheduled the row path, and N8 took 137.4
        // us against 136.4 on the H100 (round 16 of the tuning notes).
        int S0 = e * steps;
        auto step = [&](int s, unsigned (&a)[BLOCK_K / 8][4], unsigned (&other)[BLOCK_K / 8][4]) {
            int S = S0 + s;
            mbar_wait(bars + 8 * (S % ROW_STAGES), (S / ROW_STAGES) & 1);
#if TMA
            load_a_tma(a, rwgen + S % ROW_STAGES * (W_BYTES / 4), TOGETHER ? warp : warp % 4);
#else
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            load_a(a, rwgen + S % ROW_STAGES * (W_BYTES / 4), ocl);
#endif
            issue(acc, a, base + S / d.kc % NSLAB * SLAB_BYTES + S % d.kc * 128);
            asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
            keep_live(other);
            if (s > 0) {
                mbar_arrive(bars + 8 * (ROW_STAGES + (S - 1) % ROW_STAGES));
            }
        };
        int s = 0;
        for (; s + 1 < steps; s += 2) {
            step(s, a0, a1);
            step(s + 1, a1, a0);
        }
        if (s < steps) {
            step(s, a0, a1);
        }
        if (!TOGETHER && e + 1 < units) {
            asm volatile("bar.arrive %0, 256;" ::"r"(2 + w) : "memory");
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        keep_live(a0);
        keep_live(a1);
        mbar_arrive(bars + 8 * (ROW_STAGES + (S0 + steps - 1) % ROW_STAGES));

        // The store, as the row path's, with the pixel of each column found on the way: column
        // 8j + 2t + x is position q = q0 + 8j + 2t + x of image b, row r = q / cols, column c.
        int u = blockIdx.x + e * stride, b = u / per_image, oc = n0 + ocl;
#pragma unroll
        for (int x = 0; x < 2; x++) {
            int q = u % per_image * TILE + 2 * t + x, r = q / d.cols, c = q % d.cols;
#pragma unroll
            for (int j = 0; j < TILE / 8; j++) {
                if (r < d.out_rows && c < d.out_cols && oc < d.n) {
                    store_pair(output + (size_t)((b * d.out_rows + r) * d.out_cols + c) * d.n, oc,
                               d.n, acc[4 * j + x], acc[4 * j + 2 + x]);
                }
                c += 8;
                while (c >= d.cols) {
                    c -= d.cols;
                    r++;
                }
            }
        }
    }
}
// ANCHOR_END: walk


extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    conv2d_nhwc(const float* input, const float* weight, float* output, int batch, int input_rows,
                int input_cols, int input_channels, int output_channels, int kernel_rows,
                int kernel_cols)
{
    extern __shared__ float4 shared4[];
    unsigned raw = (unsigned)__cvta_generic_to_shared(shared4);
    unsigned base = (raw + 1023) & ~1023u;
    unsigned rw = base + NSLAB * SLAB_BYTES; // the row path's weight tiles
    const float* rwgen = (const float*)((char*)shared4 + (rw - raw));
    unsigned iw = base + STAGES * A_BYTES; // the im2col path's weight tiles
    const float* iwgen = (const float*)((char*)shared4 + (iw - raw));
    int* table = (int*)((char*)shared4 + (base + REGION - raw));
    unsigned bars = base + REGION + TILE * 4;
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
    int m0 = blockIdx.x * BLOCK_M, n0 = blockIdx.y * BLOCK_N, mend = min(m0 + BLOCK_M, d.m);
    bool wide = input_channels % 4 == 0 && output_channels % 4 == 0;
    // ANCHOR: walk_choice
    if (wide && d.ic % BLOCK_K == 0 && d.kc * (NSLAB - 1) + 1 >= ROW_STAGES &&
        TILE + d.kc - 1 <= SLAB_ROWS && (TMA || d.n - n0 <= 64)) {
#if TMA
        if (d.n - n0 > 64) {
            walk<true>(input, weight, output, d, batch, kernel_rows, raw, base, shared4);
            return;
        }
#endif
        walk<false>(input, weight, output, d, batch, kernel_rows, raw, base, shared4);
        return;
    }
    // ANCHOR_END: walk_choice
    int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    int ocw = warp / 4 * 64 + warp % 4 * 16 + 2 * g; // this thread's output channels: + 0, + 1
    // (A warpgroup past the last output channel computes zeros rather than branch around its
    // wgmma's: a branch there makes the compiler serialize them.)

    // The row path: the block's pixels are windows whose top-left inputs lie in a run of input
    // pixels p0 .. p0 + TILE; all TILE positions of the run are computed (those that are no
    // window of the block are dropped at the store), so tap (i, j) of position v is input pixel
    // p0 + v + i * cols + j, and the B tile of tap (i, j) is the slab of kernel row i shifted by
    // j rows: a descriptor j * 128 bytes further. A slab is overwritten NSLAB slabs later, which
    // must be after the step ROW_STAGES before (the producer waits for that one); and a run of at
    // most TILE positions (a block whose pixels span two images falls back to im2col tiles).
    int p0 = pixel(d, m0), plast = pixel(d, mend - 1), span = plast - p0 + d.kc;
    bool rows = wide && d.ic % BLOCK_K == 0 && d.kc * (NSLAB - 1) + 1 >= ROW_STAGES &&
                plast - p0 < TILE && span <= SLAB_ROWS;
    int chunks = d.ic / BLOCK_K, steps = kernel_rows * chunks * d.kc;
    // table[v]: the output pixel that D's column v is, or -1.
    for (int v = threadIdx.x; v < TILE; v += THREADS) {
        int m = -1;
        if (rows) {
            int q = p0 + v, c = q % d.cols, r = q / d.cols % d.rows, b = q / (d.cols * d.rows);
            int at = (b * d.out_rows + r) * d.out_cols + c;
            m = c < d.out_cols && r < d.out_rows && at >= m0 && at < mend ? at : -1;
        } else if (v < BLOCK_M && m0 + v < mend) {
            m = m0 + v;
        }
        table[v] = m;
    }

    // ANCHOR: producer
    // full[s] (bars + 8 s): the producer's copies of weight tile s (and of the slab begun with
    // it) have landed, 128 arrivals, each when its thread's copies have; empty[s] (bars + 8
    // (ROW_STAGES + s)): the warpgroups that multiply are done with it, 256 arrivals.
    if (threadIdx.x == 0) {
        for (int s = 0; s < ROW_STAGES; s++) {
            mbar_init(bars + 8 * s, 128);
            mbar_init(bars + 8 * (ROW_STAGES + s), CTHREADS);
        }
    }
    __syncthreads();
    if (warp >= CTHREADS / 32) {
        // The producer hands most of its registers to the two warpgroups that multiply (they
        // take them with setmaxnreg.inc below), then copies step after step, ROW_STAGES ahead at
        // most. In the im2col path it has nothing to do.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (rows) {
            Step next = {0, 0, 0, 0};
            for (int s = 0; s < steps; s++) {
                if (s >= ROW_STAGES) {
                    mbar_wait(bars + 8 * (ROW_STAGES + s % ROW_STAGES), (s / ROW_STAGES - 1) & 1);
                }
                load_step<128>(base, rw + s % ROW_STAGES * W_BYTES, input, weight, d, n0, p0, span,
                               next, chunks, threadIdx.x - CTHREADS);
                mbar_arrive_copies(bars + 8 * (s % ROW_STAGES));
            }
            asm volatile("cp.async.wait_all;" ::: "memory");
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    // ANCHOR_END: producer

    float acc[TILE / 2];
#pragma unroll
    for (int q = 0; q < TILE / 2; q++) {
        acc[q] = 0.0f;
        asm volatile("" : "+f"(acc[q])); // no zeros rematerialized inside the pipeline
    }

    if (rows) {
        // ANCHOR: wgmma_pipeline
        // Per step: wait for its stage, load the weight words, start its wgmma's, then retire
        // the step before (one group stays in flight, so the tensor cores always have the next
        // one) and give that step's stage back. Two sets of A registers, one a step.
        unsigned a0[BLOCK_K / 8][4], a1[BLOCK_K / 8][4];
        auto step = [&](int s, unsigned (&a)[BLOCK_K / 8][4], unsigned (&other)[BLOCK_K / 8][4]) {
            mbar_wait(bars + 8 * (s % ROW_STAGES), (s / ROW_STAGES) & 1);
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            load_a(a, rwgen + s % ROW_STAGES * (W_BYTES / 4), ocw);
            issue(acc, a, base + s / d.kc % NSLAB * SLAB_BYTES + s % d.kc * 128);
            asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
            keep_live(other); // read by the group just retired: registers of its own till here
            if (s > 0) {
                mbar_arrive(bars + 8 * (ROW_STAGES + (s - 1) % ROW_STAGES));
            }
        };
        int s = 0;
        for (; s + 1 < steps; s += 2) { // (a step under a condition in this loop would make
            step(s, a0, a1);            // ptxas serialize every wgmma: warning C7513)
            step(s + 1, a1, a0);
        }
        if (s < steps) {
            step(s, a0, a1);
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        keep_live(a0);
        keep_live(a1);
        // ANCHOR_END: wgmma_pipeline
    } else {
        // The im2col path: the two warpgroups copy and multiply, STAGES - 1 K tiles in flight;
        // per tile, once its stage is ready, the wgmma's start first, then the copies of a later
        // tile (issuing a copy can stall, and wgmma's behind it would wait), then the wait.
        int win[A_ROWS];
#pragma unroll
        for (int r = 0; r < A_ROWS; r++) {
            int row = threadIdx.x / 8 + r * A_ROW_STEP, m = m0 + row;
            win[r] = row < BLOCK_M && m < d.m ? pixel(d, m) * d.ic : -1;
        }
        Cursor at = Cursor::start(d, threadIdx.x % 8 * 4);
        int tiles = (d.k + BLOCK_K - 1) / BLOCK_K;
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < tiles) {
                load_tile(base + s * A_BYTES, iw + s * W_BYTES, input, weight, d, m0, n0,
                          s * BLOCK_K, wide, win, at);
            }
            asm volatile("cp.async.commit_group;");
        }
        for (int kt = 0; kt < tiles; kt++) {
            stage_ready();
            int s = kt % STAGES, next = kt + STAGES - 1;
            start_tile(acc, iwgen + s * (W_BYTES / 4), base + s * A_BYTES, ocw);
            if (next < tiles) {
                int n = next % STAGES;
                load_tile(base + n * A_BYTES, iw + n * W_BYTES, input, weight, d, m0, n0,
                          next * BLOCK_K, wide, win, at);
            }
            asm volatile("cp.async.commit_group;");
            finish_tile();
        }
    }

    // Accumulator q of n8 chunk j (acc[4j + q]) is D^T's row g + 8 (q / 2) of the warp's 16,
    // column 8j + 2t + q % 2: output channel ocw + q / 2 of column 8j + 2t + q % 2. So a thread
    // stores two neighbouring channels of a pixel at once.
    int oc = n0 + ocw;
#pragma unroll
    for (int j = 0; j < TILE / 8; j++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
            int m = table[8 * j + 2 * t + e];
            if (m < 0 || oc >= d.n) {
                continue;
            }
            store_pair(output + (size_t)m * d.n, oc, d.n, acc[4 * j + e], acc[4 * j + 2 + e]);
        }
    }
}
// ANCHOR_END: hopper
// ANCHOR_END: solve
