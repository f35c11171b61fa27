// Tuning harness (rounds 12 and 13): the solution's Hopper path, warp-specialized: a producer warpgroup
// copies (cp.async, signalling full mbarriers), two consumer warpgroups multiply (waiting on them,
// keeping one wgmma group in flight, giving stages back through empty mbarriers). sm_90a only.
#define HOPPER 1
// ANCHOR: hopper_shape
// The Hopper path (compiled only for sm_90a, an H100's own target): the warpgroup
// tensor-core instruction wgmma, which multiplies a 64 x 8 tile by an 8 x N one, N up to 256,
// reading B (and optionally A) from shared memory itself. For tf32 both operands must be K-major
// (K contiguous), so the product is computed transposed: D^T[OC, M] = W^T[OC, K] x A^T[K, M].
// A^T's columns are im2col rows, channels contiguous: K-major already. W^T comes from registers
// (each thread reads its words from a [k][oc] tile, as mma.sync's A fragment), so the HWIO weight
// needs no transpose. A block is two warpgroups, one per 64 output channels, over a run of
// TILE = 256 pixel columns (one m64n256k8 per k8 step), 128 accumulators a thread.
#ifndef EVL
#define EVL 0 // the input's copies keep their lines in L2 (evict_last policy)
#endif
#define TILE 256
#define BLOCK_M (TILE - 8) // pixels a block owns (the row path computes a run of TILE)
#define BLOCK_N 128
#define BLOCK_K 32
#ifndef STAGES
#define STAGES 4 // the im2col path's stages (the consumers copy and multiply)
#endif
#ifndef ROW_STAGES
#define ROW_STAGES 6 // the row path's weight stages (the producer fills them)
#endif
#ifndef NSLAB
#define NSLAB 3 // the row path's slabs
#endif
#ifndef SS
#define SS 0 // the row path: one slab a channel chunk for all kernel rows (two of them)
#endif
#define SS_ROWS 528
#define SS_BYTES (SS_ROWS * 128)
#ifndef MC
#define MC 0 // clusters of 2: each block copies half of each weight tile into both (multicast)
#endif
#if MC
#define GRID_X_MULTIPLE 2 // the harness rounds the grid up to whole clusters
#endif
#ifndef PERSIST
#define PERSIST 1 // a block per SM walks tiles; 0: a block a tile
#endif
#ifndef WS
#define WS 1 // a producer warpgroup and mbarriers in the row path
#endif
#ifndef MAXNREG
#define MAXNREG 1 // WS: the producer's registers go to the consumers (setmaxnreg)
#endif
#ifndef ARRIVE_WARP
#define ARRIVE_WARP 0 // WS: one arrival a consumer warp on the empty barriers (not a thread)
#endif
#ifndef INFL
#define INFL 1 // WS: wgmma groups left in flight at the end of a step
#endif
#ifndef CUT
#define CUT 0 // timing only (wrong outputs): 1 no copies, 2 no store, 3 neither, 4 no wgmma's,
              // 5 half the store (one pixel of each thread's two)
#endif
#ifndef GW
#define GW 0 // the row path: each consumer loads its weight words from global memory into
             // registers two steps ahead (no weight stages in shared memory); slabs only
#endif
#ifndef EPI
#define EPI 0 // GW, PERSIST: the row path's tile goes to a shared staging buffer that two
              // producer warps store while the consumers go on with the next tile
#endif
#ifndef PD
#define PD 2 // GW: steps ahead that the weight words are loaded (1: two register sets, 2: three)
#endif
#ifndef RND
#define RND 0x1000u
#endif
#ifndef STORE16
#define STORE16 0 // the store: 16 bytes a thread (lanes trade pairs through shuffles), not 8
#endif
#define STG_STRIDE 132 // floats: conflict-free float2 writes of a warp's 4 pixels x 16 channels
#define STG_BYTES (TILE * STG_STRIDE * 4)
#define LOADERS (EPI ? 64 : 128) // GW: the producer threads that copy slabs (the rest store)
#if EPI && !(GW && PERSIST)
#error "EPI needs GW and PERSIST"
#endif
#define CTHREADS 256
#define THREADS (CTHREADS + 128 * WS)
#define MIN_BLOCKS 1
#ifndef MCW
#define MCW 0 // MC: unpadded weight rows, half a tile one bulk copy where output_channels = 128
#endif
#define W_STRIDE (BLOCK_N + 8 * !MCW) // floats; bank-conflict free 8-byte fragment loads
#define A_BYTES (TILE * 128)  // an im2col tile: TILE rows of 32 floats
#define W_BYTES (BLOCK_K * W_STRIDE * 4)
#define SLAB_ROWS (TILE + 16)
#define SLAB_BYTES (SLAB_ROWS * 128)
#if GW
#define ROWS_BYTES (NSLAB * SLAB_BYTES + EPI * STG_BYTES)
#else
#define ROWS_BYTES ((SS ? 2 * SS_BYTES : NSLAB * SLAB_BYTES) + ROW_STAGES * W_BYTES + STG64)
#endif
#define IM_BYTES (STAGES * (A_BYTES + W_BYTES))
#define REGION (ROWS_BYTES > IM_BYTES ? ROWS_BYTES : IM_BYTES)
// + the table of output pixels, the mbarriers, + 1024 to align the tiles to the swizzle's 1024 bytes
#ifndef STAGED
#define STAGED 0 // the store through a 32-pixel x 128-channel shared chunk: whole 512-byte rows
#endif
#ifndef CPX
#define CPX 32 // STAGED: pixel columns a chunk
#endif
#ifndef BW
#define BW 0 // the row path's weight tiles by bulk copies, one a 512-byte row (not cp.async)
#endif
#ifndef STCS
#define STCS 0 // the output stores streaming (st.global.cs: evict first from L2)
#endif
#define CHUNK_BYTES (CPX * STG_STRIDE * 4)
#ifndef TMA
#define TMA 0 // the row path's copies by TMA: tensor maps the block builds (tensormap.replace)
#endif
#ifndef DESYNC
#define DESYNC 0 // PERSIST, timing only: block b starts its first tile at step kc * (b * steps / kc / stride)
                 // and ends with the first tile's other steps, unstored (the same work, the
                 // stores out of step across the SMs)
#endif
#if DESYNC && !(PERSIST && !GW && !MC && !SS)
#error "DESYNC needs PERSIST, not GW, MC or SS"
#endif
#ifndef TSTORE
#define TSTORE 0 // TMA, PERSIST, timing only: the tile through a 64 KB staging buffer and tensor
                 // stores that drain it while the next tile computes (output rows as if the
                 // tile's pixels were contiguous: wrong placement, the same traffic)
#endif
#if TSTORE && !(TMA && PERSIST)
#error "TSTORE needs TMA and PERSIST"
#endif
#define STG64 (TSTORE ? 65536 : 0)
// TSTORE 1: two halves of 128 positions through the one buffer; 2: four quarters of 64 through
// two 32 KB buffers, one store group left in flight
#define TSQ (TSTORE == 2 ? 64 : 128)
#define SHARED_BYTES (REGION + TILE * 4 + 16 * ROW_STAGES + 1024 + STAGED * CHUNK_BYTES + 512 * TMA)

static_assert(W_BYTES % 1024 == 0 && A_BYTES % 1024 == 0, "tiles stay 1024-byte aligned");
static_assert(TILE == 256, "one m64n256k8 a k8 step covers the tile");

extern "C" __device__ const int launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};
// ANCHOR_END: hopper_shape

// ANCHOR: async
// Copies `bytes` (4 or 16) from global to shared memory without passing through registers; with
// `valid` false nothing is read and the destination is filled with zeros. `l1` keeps the line in
// L1 too (16-byte copies only; 4-byte ones always go through L1). The destination is a shared
// memory address `at` (the Hopper path computes those) or a pointer `dst`.
__device__ __forceinline__ void copy_async(unsigned at, const float* src, bool valid, int bytes,
                                           bool l1 = false)
{
    int n = valid ? bytes : 0;
    if (bytes == 16 && l1 && EVL) {
        asm volatile("{\n.reg .b64 pol;\ncreatepolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
                     "cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 16, %2, pol;\n}"
                     ::"r"(at), "l"(src), "r"(n));
    } else if (bytes == 16 && l1) {
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

// weight[k0 .. + BLOCK_K, n0 .. + BLOCK_N] into a [k][oc] tile of W_STRIDE floats a row; zeros
// past K and N. L2 only (.cg): every block reads the same weight tiles.
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
};

// The row path's copies of one step (kernel row i, channel chunk c, kernel column j; g counts
// the slabs begun), as the mma.sync path's: at j = 0 the slab of kernel row i, chunk c (span
// input pixels from p0 + i * cols; the rows after them that the last taps read, zeros) into slab
// g % 2; always the weight's tile of (i, j, c).
template <int N>
__device__ __forceinline__ void load_step(unsigned slabs, unsigned sw, const float* input,
                                          const float* weight, const Dims& d, int n0, int p0,
                                          int span, Step& at, int chunks, int tid,
                                          bool weights = true)
{
#if SS
    if (at.j == 0 && at.i == 0) {
        unsigned slab = slabs + at.g % 2 * SS_BYTES;
        const float* src = input + p0 * d.ic + at.c * BLOCK_K;
        int kr = d.k / (d.kc * d.ic);
        int used = min(TILE + (kr - 1) * d.cols + d.kc - 1, SS_ROWS);
        for (int e = tid; e < used * 8; e += N) {
            int p = e / 8, q = e % 8 * 4;
            copy_async(slab + swizzled(p, q), src + (p < span ? p * d.ic + q : 0), p < span, 16,
                       true);
        }
    }
    load_weight<N>(sw, weight, d, n0, (at.i * d.kc + at.j) * d.ic + at.c * BLOCK_K, true, tid);
    if (++at.j == d.kc) {
        at.j = 0;
        if (++at.i == d.k / (d.kc * d.ic)) {
            at.i = 0;
            at.c++;
            at.g++;
        }
    }
    return;
#endif
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
    if (weights) {
        load_weight<N>(sw, weight, d, n0, (at.i * d.kc + at.j) * d.ic + at.c * BLOCK_K, true, tid);
    }
    if (++at.j == d.kc) {
        at.j = 0;
        at.g++;
        if (++at.c == chunks) {
            at.c = 0;
            at.i++;
        }
    }
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

__device__ __forceinline__ void mbar_expect_tx(unsigned bar, int bytes)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}"
                 ::"r"(bar), "r"(bytes) : "memory");
}

// `bytes` from global `src` to shared `dst` of both blocks of the cluster, each block's mbarrier
// `bar` (same offsets) counting them.
__device__ __forceinline__ void bulk_multicast(unsigned dst, const float* src, int bytes, unsigned bar)
{
    unsigned short mask = 3;
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1], %2, [%3], %4;" ::"r"(dst), "l"(src), "r"(bytes), "r"(bar), "h"(mask)
                 : "memory");
}

// `bytes` from global `src` to shared `dst`, counted on the mbarrier `bar` (BW).
__device__ __forceinline__ void bulk_load(unsigned dst, const float* src, int bytes, unsigned bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void mbar_arrive_remote(unsigned bar, unsigned rank)
{
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
                 "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}" ::"r"(bar), "r"(rank)
                 : "memory");
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// An empty use of A's words: they keep registers of their own until here.
#if TMA
__device__ __align__(128) unsigned char tensor_maps[1024][3][128];
template <int SWIZZLE>
__device__ __forceinline__ void build_map(unsigned sm, const void* src, int d0, int d1,
                                          long long stride, int b0, int b1)
{
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(sm), "l"(src) : "memory");
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(sm), "r"(d0) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(sm), "r"(d1) : "memory");
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" ::"r"(sm), "l"(stride) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(sm), "r"(b0) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(sm), "r"(b1) : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 7;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], %1;" ::"r"(sm), "n"(SWIZZLE) : "memory");
    asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;" ::"r"(sm) : "memory");
}

__device__ __forceinline__ void tma_load(unsigned dst, const void* map, int x, int y, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}

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

__device__ __forceinline__ void keep_live(const unsigned (&a)[BLOCK_K / 8][4])
{
#pragma unroll
    for (int kb = 0; kb < BLOCK_K / 8; kb++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            asm volatile("" ::"r"(a[kb][q]));
}


// A tile of the product: pixels m0 .. mend, output channels n0 ..; the row path's run p0 ..
// p0 + TILE and the input pixels its slabs span, and whether the row path applies.
struct Tile {
    int m0, n0, mend, p0, span;
    bool rows;
};

__device__ __forceinline__ Tile tile_at(const Dims& d, int x, int y, bool wide)
{
    Tile T;
    T.m0 = x * BLOCK_M;
    T.n0 = y * BLOCK_N;
    T.mend = min(T.m0 + BLOCK_M, d.m);
    T.p0 = pixel(d, T.m0);
    int plast = pixel(d, T.mend - 1);
#if SS
    int kr = d.k / (d.kc * d.ic);
    T.span = plast - T.p0 + (kr - 1) * d.cols + d.kc;
    T.rows = wide && d.ic % BLOCK_K == 0 && kr * d.kc + 1 >= ROW_STAGES && plast - T.p0 < TILE &&
             T.span <= SS_ROWS;
#else
    T.span = plast - T.p0 + d.kc;
    T.rows = wide && d.ic % BLOCK_K == 0 && (GW || d.kc * (NSLAB - 1) + 1 >= ROW_STAGES) &&
             plast - T.p0 < TILE && T.span <= SLAB_ROWS;
#endif
    return T;
}

__device__ __forceinline__ void named_sync(int id, int n)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}

#if MC
static_assert(!PERSIST && !SS, "MC: a block a tile");
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, MIN_BLOCKS)
#else
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
#endif
    conv2d_nhwc(const float* input, const float* weight, float* output, int batch, int input_rows,
                int input_cols, int input_channels, int output_channels, int kernel_rows,
                int kernel_cols)
{
    extern __shared__ float4 shared4[];
    unsigned raw = (unsigned)__cvta_generic_to_shared(shared4);
    unsigned base = (raw + 1023) & ~1023u;
    unsigned rw = base + NSLAB * SLAB_BYTES; // the row path's weight stages
    const float* rwgen = (const float*)((char*)shared4 + (rw - raw));
    unsigned iw = base + STAGES * A_BYTES; // the im2col path's weight stages
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
    bool wide = input_channels % 4 == 0 && output_channels % 4 == 0;
    int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    int ocw = warp / 4 * 64 + warp % 4 * 16 + 2 * g; // this thread's output channels: + 0, + 1
    int chunks = d.ic / BLOCK_K, steps = kernel_rows * chunks * d.kc;

    // The tiles this block walks: first, first + stride, ...
    int total = gridDim.x * gridDim.y, first = blockIdx.y * gridDim.x + blockIdx.x, stride = total;
#if PERSIST
    unsigned nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    stride = min(total, (int)nsm);
    if (first >= stride) {
        return;
    }
#endif
    // The walk: tile e of this block, and its steps lo .. hi (DESYNC: the first tile's steps
    // from `off`, and a last extra walk of the first tile's steps before it).
    int walk = (total - first + stride - 1) / stride, off = 0;
#if DESYNC
    if (tile_at(d, first % gridDim.x, first / gridDim.x, wide).rows) {
        off = d.kc * (first * (steps / d.kc) / stride);
    }
    walk += off > 0;
#endif
    auto tile_of = [&](int e) { return off > 0 && e == walk - 1 ? first : first + e * stride; };
    auto lo_of = [&](int e) { return e == 0 ? off : 0; };
    auto hi_of = [&](int e) { return off > 0 && e == walk - 1 ? off : steps; };

    // full[s] (bars + 8 s): the producers' copies of stage s landed (128 arrivals, each when its
    // thread's copies have); empty[s] (bars + 8 (ROW_STAGES + s)): the consumers are done with it.
    // MC: this block's tile (a block past M takes its peer's, and stores nothing) and whether
    // both blocks of the cluster take the row path with whole weight rows (then the weight tiles
    // come by multicast).
    bool live = true, mc = false;
    unsigned rank = 0;
#if MC
    rank = cluster_rank();
    int bx = blockIdx.x;
    if (bx * BLOCK_M >= d.m) {
        live = false;
        bx--;
    }
    first = blockIdx.y * gridDim.x + bx;
    {
        int px = (int)(blockIdx.x ^ 1) * BLOCK_M < d.m ? blockIdx.x ^ 1 : bx;
        Tile a = tile_at(d, bx, blockIdx.y, wide), b = tile_at(d, px, blockIdx.y, wide);
        mc = a.rows && b.rows && d.n % BLOCK_N == 0;
    }
#endif
#if GW
    // GW: full[s] / empty[s] (bars + 8 s, bars + 8 (NSLAB + s)) for slab s; EPI: stg_full (the
    // consumers have written the staging buffer) and stg_empty (the storers have read it).
    const unsigned stg_full = bars + 16 * NSLAB, stg_empty = stg_full + 8;
    static_assert(8 * (2 * NSLAB + 2) <= 16 * ROW_STAGES, "room for the barriers");
    if (threadIdx.x == 0) {
        for (int s = 0; s < NSLAB; s++) {
            mbar_init(bars + 8 * s, LOADERS);
            mbar_init(bars + 8 * (NSLAB + s), CTHREADS);
        }
        mbar_init(stg_full, CTHREADS);
        mbar_init(stg_empty, 128 - LOADERS);
    }
    if (false)
#endif
    if (threadIdx.x == 0) {
        for (int s = 0; s < ROW_STAGES; s++) {
            mbar_init(bars + 8 * s, TMA ? 1 : mc || BW ? 129 : 128);
            mbar_init(bars + 8 * (ROW_STAGES + s), mc ? 2 * CTHREADS / 32 : ARRIVE_WARP ? CTHREADS / 32 : CTHREADS);
        }
    }
#if MC
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    cluster_sync();
#else
    __syncthreads();
#endif

    if (warp >= CTHREADS / 32) {
        // The producer: the row path's copies, step after step over all its tiles (gs counts
        // the steps, the slab counter in `next` the slabs); an im2col tile it hands over whole.
#if MAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
        int tid = threadIdx.x - CTHREADS, gs = 0, gslab = 0;
#if TMA
        // The two tensor maps, built by the first producer warp and published to global memory
        // (the block's slot) for TMA; thread 0 of the producer then issues every copy.
        unsigned maps = (bars + 16 * ROW_STAGES + 127) & ~127u;
        const unsigned char* gmap = tensor_maps[(blockIdx.y * gridDim.x + blockIdx.x) % 1024][0];
        if (tid < 32) {
            ((unsigned*)((char*)shared4 + (maps - raw)))[tid] = 0;
            ((unsigned*)((char*)shared4 + (maps - raw)))[32 + tid] = 0;
            ((unsigned*)((char*)shared4 + (maps - raw)))[64 + tid] = 0;
            __syncwarp();
            if (tid == 0) {
                build_map<3>(maps, input, d.ic, batch * d.rows * d.cols, (long long)d.ic * 4, 32,
                             SLAB_ROWS / 2);
                build_map<2>(maps + 128, weight, d.n, d.k, (long long)d.n * 4, 16, BLOCK_K);
                build_map<3>(maps + 256, output, d.n, d.m, (long long)d.n * 4, 32, TSQ);
            }
            __syncwarp();
            asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
                         ::"l"(gmap), "r"(maps) : "memory");
            asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
                         ::"l"(gmap + 128), "r"(maps + 128) : "memory");
            asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
                         ::"l"(gmap + 256), "r"(maps + 256) : "memory");
            if (tid == 0) {
                asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(gmap) : "memory");
                asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(gmap + 128) : "memory");
            }
        }
#endif
#if GW
        // Slab after slab (kernel row i, channel chunk c), NSLAB ahead at most; EPI: the last
        // 64 threads store the staged tiles instead.
        int nst = 0;
        for (int tile = first; tile < total; tile += stride) {
            Tile T = tile_at(d, tile % gridDim.x, tile / gridDim.x, wide);
            if (!T.rows) {
                named_sync(2, THREADS);
                named_sync(2, THREADS);
                continue;
            }
            if (tid < LOADERS) {
                for (int i = 0; i < kernel_rows; i++) {
                    for (int c = 0; c < chunks; c++, gslab++) {
                        if (gslab >= NSLAB) {
                            mbar_wait(bars + 8 * (NSLAB + gslab % NSLAB), (gslab / NSLAB - 1) & 1);
                        }
                        Step at = {i, c, 0, gslab};
                        load_step<LOADERS>(base, 0, input, weight, d, T.n0, T.p0, T.span, at,
                                           chunks, tid, false);
                        mbar_arrive_copies(bars + 8 * (gslab % NSLAB));
                    }
                }
            } else {
                mbar_wait(stg_full, nst & 1);
                const float* stg = (const float*)((char*)shared4 + (base + NSLAB * SLAB_BYTES - raw));
                int lane = tid % 32, q = lane * 4;
                bool okq = T.n0 + q < d.n;
#pragma unroll 4
                for (int v = (tid - LOADERS) / 32; v < TILE; v += (128 - LOADERS) / 32) {
                    int p = T.p0 + v, c = p % d.cols, r = p / d.cols % d.rows, b = p / (d.cols * d.rows);
                    int at = (b * d.out_rows + r) * d.out_cols + c;
                    if (okq && c < d.out_cols && r < d.out_rows && at >= T.m0 && at < T.mend) {
                        *(float4*)&output[(size_t)at * d.n + T.n0 + q] =
                            *(const float4*)&stg[v * STG_STRIDE + q];
                    }
                }
                mbar_arrive(stg_empty);
                nst++;
            }
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
        return;
#endif
        for (int e = 0; e < walk; e++) {
            int tile = tile_of(e), lo = lo_of(e), hi = hi_of(e);
            Tile T = tile_at(d, tile % gridDim.x, tile / gridDim.x, wide);
            if (!T.rows) {
                named_sync(2, THREADS); // the consumers are done with every stage
                named_sync(2, THREADS); // and with the im2col tile
                continue;
            }
            Step next = {lo / d.kc / chunks, lo / d.kc % chunks, 0, gslab};
#if TMA
            if (tid == 0) {
                for (int s = lo; s < hi; s++, gs++) {
                    unsigned full = bars + 8 * (gs % ROW_STAGES);
                    if (gs >= ROW_STAGES) {
                        mbar_wait(bars + 8 * (ROW_STAGES + gs % ROW_STAGES), (gs / ROW_STAGES - 1) & 1);
                    }
                    unsigned bytes = BLOCK_K * BLOCK_N * 4 + (next.j == 0 ? SLAB_BYTES : 0);
                    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full), "r"(bytes) : "memory");
                    if (next.j == 0) {
                        unsigned slab = base + next.g % NSLAB * SLAB_BYTES;
                        int y = T.p0 + next.i * d.cols;
                        tma_load(slab, gmap, next.c * BLOCK_K, y, full);
                        tma_load(slab + SLAB_BYTES / 2, gmap, next.c * BLOCK_K, y + SLAB_ROWS / 2, full);
                    }
                    unsigned sw = rw + gs % ROW_STAGES * W_BYTES;
                    int k0 = (next.i * d.kc + next.j) * d.ic + next.c * BLOCK_K;
#pragma unroll
                    for (int q = 0; q < BLOCK_N / 16; q++) {
                        tma_load(sw + q * BLOCK_K * 64, gmap + 128, T.n0 + 16 * q, k0, full);
                    }
                    if (++next.j == d.kc) {
                        next.j = 0;
                        next.g++;
                        if (++next.c == chunks) {
                            next.c = 0;
                            next.i++;
                        }
                    }
                }
                gslab = next.g;
            }
            __syncwarp();
            continue;
#endif
            for (int s = lo; s < hi; s++, gs++) {
                if (gs >= ROW_STAGES) {
                    mbar_wait(bars + 8 * (ROW_STAGES + gs % ROW_STAGES), (gs / ROW_STAGES - 1) & 1);
                }
                if (mc) {
                    int k0 = (next.i * d.kc + next.j) * d.ic + next.c * BLOCK_K;
                    unsigned full = bars + 8 * (gs % ROW_STAGES);
                    if (tid == 0) {
                        mbar_expect_tx(full, BLOCK_K * BLOCK_N * 4);
                    }
                    if (MCW && d.n == BLOCK_N) {
                        if (tid == 0) {
                            int kk = rank * (BLOCK_K / 2);
                            bulk_multicast(rw + gs % ROW_STAGES * W_BYTES + kk * W_STRIDE * 4,
                                           weight + (size_t)(k0 + kk) * d.n, BLOCK_K / 2 * BLOCK_N * 4,
                                           full);
                        }
                    } else if (tid < BLOCK_K / 2) {
                        int kk = rank * (BLOCK_K / 2) + tid;
                        bulk_multicast(rw + gs % ROW_STAGES * W_BYTES + kk * W_STRIDE * 4,
                                       weight + (size_t)(k0 + kk) * d.n + T.n0, BLOCK_N * 4, full);
                    }
                    load_step<128>(base, 0, input, weight, d, T.n0, T.p0, T.span, next, chunks, tid,
                                   false);
                } else if (BW && CUT != 1 && CUT != 3) {
                    // BW: the weight tile as 32 bulk copies of a 512-byte row (into the padded
                    // rows), counted in bytes on full; the slab by cp.async as before.
                    unsigned full = bars + 8 * (gs % ROW_STAGES), sw = rw + gs % ROW_STAGES * W_BYTES;
                    int k0 = (next.i * d.kc + next.j) * d.ic + next.c * BLOCK_K;
                    bool bw = T.n0 + BLOCK_N <= d.n;
                    if (bw) {
                        if (tid == 0) {
                            mbar_expect_tx(full, BLOCK_K * BLOCK_N * 4);
                        }
                        if (tid < BLOCK_K) {
                            bulk_load(sw + tid * W_STRIDE * 4, weight + (size_t)(k0 + tid) * d.n + T.n0,
                                      BLOCK_N * 4, full);
                        }
                    } else if (tid == 0) {
                        mbar_arrive(full);
                    }
                    load_step<128>(base, sw, input, weight, d, T.n0, T.p0, T.span, next, chunks, tid,
                                   !bw);
                } else if (CUT != 1 && CUT != 3) {
                    load_step<128>(base, rw + gs % ROW_STAGES * W_BYTES, input, weight, d, T.n0,
                                   T.p0, T.span, next, chunks, tid);
                } else if (++next.j == d.kc) {
                    next.j = 0;
                    next.g++;
                }
                mbar_arrive_copies(bars + 8 * (gs % ROW_STAGES));
            }
            gslab = next.g;
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
#if MC
        cluster_sync(); // the peer may still multicast into this block, or arrive on its barriers
#endif
        return;
    }
#if MAXNREG
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif

    // Gives step x's stage back (MC: to both blocks of the cluster).
    auto release = [&](int x) {
        unsigned empty = bars + 8 * (ROW_STAGES + x % ROW_STAGES);
        if (mc) {
            __syncwarp();
            if (threadIdx.x % 32 == 0) {
                mbar_arrive(empty);
                mbar_arrive_remote(empty, rank ^ 1);
            }
        } else if (!ARRIVE_WARP || threadIdx.x % 32 == 0) {
            mbar_arrive(empty);
        }
    };
    int gs = 0, gslab = 0, nst = 0;
#if TSTORE
    const unsigned char* omap = tensor_maps[(blockIdx.y * gridDim.x + blockIdx.x) % 1024][2];
    const unsigned stg_at = base + NSLAB * SLAB_BYTES + ROW_STAGES * W_BYTES;
    if (threadIdx.x == 0) {
        asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(omap) : "memory");
    }
#endif
    for (int e = 0; e < walk; e++) {
        int tile = tile_of(e), n = hi_of(e) - lo_of(e);
        Tile T = tile_at(d, tile % gridDim.x, tile / gridDim.x, wide);
#if TSTORE
        if (!T.rows && threadIdx.x == 0) { // the im2col tile's copies overwrite the staging
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
#endif
        named_sync(1, CTHREADS); // everyone has stored the tile before
        // table[v]: the output pixel that D's column v is, or -1.
        for (int v = threadIdx.x; v < TILE; v += CTHREADS) {
            int m = -1;
            if (T.rows) {
                int q = T.p0 + v, c = q % d.cols, r = q / d.cols % d.rows, b = q / (d.cols * d.rows);
                int at = (b * d.out_rows + r) * d.out_cols + c;
                m = c < d.out_cols && r < d.out_rows && at >= T.m0 && at < T.mend ? at : -1;
            } else if (v < BLOCK_M && T.m0 + v < T.mend) {
                m = T.m0 + v;
            }
            table[v] = m;
        }
        named_sync(1, CTHREADS);

        float acc[TILE / 2];
#pragma unroll
        for (int q = 0; q < TILE / 2; q++) {
            acc[q] = 0.0f;
            asm volatile("" : "+f"(acc[q])); // no zeros rematerialized inside the pipeline
        }
#if GW
        if (T.rows) {
            // Step s = (i * chunks + c) * kc + j reads slab gslab + s / kc at pixel row j, and
            // this thread's weight words, loaded from global memory two steps ahead into one of
            // three register sets (the third is the one the group in flight still reads).
            auto ldw = [&](unsigned (&w)[BLOCK_K / 8][4], int s) {
                int j = s % d.kc, c = s / d.kc % chunks, i = s / (d.kc * chunks);
                int k0 = (i * d.kc + j) * d.ic + c * BLOCK_K;
                bool ok = T.n0 + ocw < d.n;
                const float* src = weight + (size_t)(k0 + t) * d.n + (ok ? T.n0 + ocw : 0);
#pragma unroll
                for (int kb = 0; kb < BLOCK_K / 8; kb++) {
                    float2 lo = __ldg((const float2*)(src + (size_t)(kb * 8) * d.n));
                    float2 hi = __ldg((const float2*)(src + (size_t)(kb * 8 + 4) * d.n));
                    w[kb][0] = ok ? __float_as_uint(lo.x) : 0u;
                    w[kb][1] = ok ? __float_as_uint(lo.y) : 0u;
                    w[kb][2] = ok ? __float_as_uint(hi.x) : 0u;
                    w[kb][3] = ok ? __float_as_uint(hi.y) : 0u;
                }
            };
            auto step = [&](int s, unsigned (&a)[BLOCK_K / 8][4], unsigned (&other)[BLOCK_K / 8][4]) {
                int sl = gslab + s / d.kc, j = s % d.kc;
                mbar_wait(bars + 8 * (sl % NSLAB), (sl / NSLAB) & 1); // (done at j > 0)
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#pragma unroll
                for (int kb = 0; kb < BLOCK_K / 8; kb++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        a[kb][q] += RND;
                issue(acc, a, base + sl % NSLAB * SLAB_BYTES + j * 128);
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
                keep_live(other); // read by the group just retired
                if (j == 0 && s > 0) {
                    mbar_arrive(bars + 8 * (NSLAB + (sl - 1) % NSLAB));
                }
                ldw(other, min(s + PD, steps - 1));
            };
            unsigned w0[BLOCK_K / 8][4], w1[BLOCK_K / 8][4], w2[BLOCK_K / 8][4] = {};
            ldw(w0, 0);
            int s = 0;
#if PD == 1
            for (; s + 1 < steps; s += 2) {
                step(s, w0, w1);
                step(s + 1, w1, w0);
            }
            if (s < steps) {
                step(s, w0, w1);
            }
            if (false)
#else
            ldw(w1, min(1, steps - 1));
#endif
            for (; s + 2 < steps; s += 3) {
                step(s, w0, w2);
                step(s + 1, w1, w0);
                step(s + 2, w2, w1);
            }
            if (s < steps) {
                step(s, w0, w2);
            }
            if (s + 1 < steps) {
                step(s + 1, w1, w0);
            }
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            keep_live(w0);
            keep_live(w1);
            keep_live(w2);
            gslab += steps / d.kc;
            mbar_arrive(bars + 8 * (NSLAB + (gslab - 1) % NSLAB));
#if EPI
            // The tile to the staging buffer, once the storers have read the one before.
            if (nst > 0) {
                mbar_wait(stg_empty, (nst - 1) & 1);
            }
            float* stg = (float*)((char*)shared4 + (base + NSLAB * SLAB_BYTES - raw));
#pragma unroll
            for (int j = 0; j < TILE / 8; j++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                    *(float2*)&stg[(8 * j + 2 * t + e) * STG_STRIDE + ocw] =
                        make_float2(acc[4 * j + e], acc[4 * j + 2 + e]);
            mbar_arrive(stg_full);
            nst++;
            continue;
#endif
        } else
#endif
        if (T.rows) {
            // Per step: wait for its stage, load the weight words, start its wgmma's, then
            // retire the step before (one group stays in flight) and give its stage back.
            unsigned a0[BLOCK_K / 8][4], a1[BLOCK_K / 8][4];
            auto step = [&](int s, unsigned (&a)[BLOCK_K / 8][4],
                            unsigned (&other)[BLOCK_K / 8][4]) {
                int x = gs + s;
                mbar_wait(bars + 8 * (x % ROW_STAGES), (x / ROW_STAGES) & 1);
#if TMA
                load_a_tma(a, rwgen + x % ROW_STAGES * (W_BYTES / 4), warp);
#else
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                load_a(a, rwgen + x % ROW_STAGES * (W_BYTES / 4), ocw);
#endif
                if (CUT != 4) {
#if SS
                    issue(acc, a, base + (gslab + s / (kernel_rows * d.kc)) % 2 * SS_BYTES +
                                      (s / d.kc % kernel_rows * d.cols + s % d.kc) * 128);
#else
                    issue(acc, a, base + (gslab + s / d.kc) % NSLAB * SLAB_BYTES + s % d.kc * 128);
#endif
                }
                asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(INFL) : "memory");
                keep_live(other); // read by the group just retired: registers of its own till here
                if (s > 0) {
                    release(x - 1);
                }
            };
            int s = 0;
            for (; s + 1 < n; s += 2) { // (a step under a condition in the loop would make
                step(s, a0, a1);        // ptxas serialize every wgmma: C7513)
                step(s + 1, a1, a0);
            }
            if (s < n) {
                step(s, a0, a1);
            }
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            keep_live(a0);
            keep_live(a1);
            gs += n;
            gslab += SS ? chunks : n / d.kc;
            release(gs - 1);
        } else {
#if EPI
            if (nst > 0) {
                mbar_wait(stg_empty, (nst - 1) & 1); // the storers are done with shared memory
            }
#endif
            named_sync(2, THREADS); // the producer has no copy in flight
            int win[A_ROWS];
#pragma unroll
            for (int r = 0; r < A_ROWS; r++) {
                int row = threadIdx.x / 8 + r * A_ROW_STEP, m = T.m0 + row;
                win[r] = row < BLOCK_M && m < d.m ? pixel(d, m) * d.ic : -1;
            }
            Cursor at = Cursor::start(d, threadIdx.x % 8 * 4);
            int tiles = (d.k + BLOCK_K - 1) / BLOCK_K;
#pragma unroll
            for (int s = 0; s < STAGES - 1; s++) {
                if (s < tiles) {
                    load_tile(base + s * A_BYTES, iw + s * W_BYTES, input, weight, d, T.m0, T.n0,
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
                    load_tile(base + n * A_BYTES, iw + n * W_BYTES, input, weight, d, T.m0, T.n0,
                              next * BLOCK_K, wide, win, at);
                }
                asm volatile("cp.async.commit_group;");
                finish_tile();
            }
            asm volatile("cp.async.wait_all;" ::: "memory");
            named_sync(2, THREADS); // done with shared memory: the producer may go on
        }

        // Accumulator q of n8 chunk j (acc[4j + q]) is D^T's row g + 8 (q / 2) of the warp's
        // 16, column 8j + 2t + q % 2: output channel ocw + q / 2 of column 8j + 2t + q % 2.
        int oc = T.n0 + ocw;
        if (CUT == 2 || CUT == 3 || !live || (off > 0 && e == walk - 1)) {
            float sum = 0.0f;
#pragma unroll
            for (int q = 0; q < TILE / 2; q++) {
                sum += acc[q];
            }
            if (sum == 12345.678f) {
                output[threadIdx.x] = sum;
            }
            continue;
        }
#if TSTORE
        {
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            char* stg = (char*)shared4 + (stg_at - raw);
            int b = ocw / 32, cc = ocw % 32;
            constexpr int PARTS = TILE / TSQ, BOX = TSQ * 128, JJ = TSQ / 8;
#pragma unroll
            for (int h = 0; h < PARTS; h++) {
                unsigned buf = TSTORE == 2 ? (h & 1) * 4 * BOX : 0;
                if (threadIdx.x == 0) {
                    if (TSTORE == 2) {
                        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
                    } else {
                        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
                    }
                }
                named_sync(1, CTHREADS);
#pragma unroll
                for (int jj = 0; jj < JJ; jj++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        int v = 8 * jj + 2 * t + e;
                        unsigned off = buf + b * BOX + v * 128 + ((((cc >> 2) ^ (v & 7)) << 4) | ((cc & 3) * 4));
                        *(float2*)(stg + off) = make_float2(acc[4 * (JJ * h + jj) + e], acc[4 * (JJ * h + jj) + 2 + e]);
                    }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                named_sync(1, CTHREADS);
                if (threadIdx.x == 0) {
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                                     ::"l"(omap), "r"(T.n0 + 32 * q), "r"(T.m0 + TSQ * h), "r"(stg_at + buf + q * BOX) : "memory");
                    }
                    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
                }
            }
            continue;
        }
#endif
#if STORE16 || STAGED
        // Lanes g and g ^ 1 trade a pixel's pair of channels, so that each stores 4 channels of
        // one pixel (16 bytes): even g pixel 8j + 2t, odd g pixel 8j + 2t + 1.
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        if (STAGED && d.n % 4 == 0) {
            // 8 chunks of 32 pixel columns: every warp writes its 16 channels of them, then
            // each warp stores whole pixel rows (512 bytes: 4 full lines) of the chunk.
            float* ch = (float*)((char*)shared4 + (base + REGION + TILE * 4 + 16 * ROW_STAGES - raw));
            int lane = threadIdx.x % 32, q = lane * 4;
#pragma unroll
            for (int c = 0; c < TILE / CPX; c++) {
                named_sync(1, CTHREADS); // the chunk before is stored
#pragma unroll
                for (int jj = 0; jj < CPX / 8; jj++)
#pragma unroll
                    for (int e = 0; e < 2; e++)
                        *(float2*)&ch[(8 * jj + 2 * t + e) * STG_STRIDE + ocw] =
                            make_float2(acc[4 * (CPX / 8 * c + jj) + e], acc[4 * (CPX / 8 * c + jj) + 2 + e]);
                named_sync(1, CTHREADS);
#pragma unroll
                for (int r = warp; r < CPX; r += CTHREADS / 32) {
                    int m = table[CPX * c + r];
                    if (m >= 0 && T.n0 + q < d.n) {
                        float4 v = *(const float4*)&ch[r * STG_STRIDE + q];
                        if (STCS) {
                            __stcs((float4*)&output[(size_t)m * d.n + T.n0 + q], v);
                        } else {
                            *(float4*)&output[(size_t)m * d.n + T.n0 + q] = v;
                        }
                    }
                }
            }
        } else if (STORE16 && d.n % 4 == 0) {
            int odd = g & 1, ocs = oc - 2 * odd;
#pragma unroll
            for (int j = 0; j < TILE / 8; j++) {
                float x0 = acc[4 * j], y0 = acc[4 * j + 2], x1 = acc[4 * j + 1], y1 = acc[4 * j + 3];
                float sx = odd ? x0 : x1, sy = odd ? y0 : y1, kx = odd ? x1 : x0, ky = odd ? y1 : y0;
                float rx = __shfl_xor_sync(0xffffffffu, sx, 4), ry = __shfl_xor_sync(0xffffffffu, sy, 4);
                int m = table[8 * j + 2 * t + odd];
                if (m >= 0 && ocs < d.n) {
                    *(float4*)&output[(size_t)m * d.n + ocs] =
                        odd ? make_float4(rx, ry, kx, ky) : make_float4(kx, ky, rx, ry);
                }
            }
        } else
#endif
        {
#pragma unroll
        for (int j = 0; j < TILE / 8; j++) {
#pragma unroll
            for (int e = 0; e < 2 - (CUT == 5); e++) {
                int m = table[8 * j + 2 * t + e];
                if (m < 0 || oc >= d.n) {
                    continue;
                }
                float* row = output + (size_t)m * d.n;
                float v0 = acc[4 * j + e], v1 = acc[4 * j + 2 + e];
                if (oc + 1 < d.n && d.n % 2 == 0) {
                    if (STCS) {
                        __stcs((float2*)&row[oc], make_float2(v0, v1));
                    } else {
                        *(float2*)&row[oc] = make_float2(v0, v1);
                    }
                } else {
                    row[oc] = v0;
                    if (oc + 1 < d.n) {
                        row[oc + 1] = v1;
                    }
                }
            }
        }
        }
    }
#if TSTORE
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
#endif
#if MC
    cluster_sync(); // the peer may still arrive on this block's barriers
#endif
}
