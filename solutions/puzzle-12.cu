// Puzzle 12: convolution as matrix products, on tensor cores (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// Same contract, cases and tolerance as puzzle 08; declare the launch the same way:
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// ANCHOR: solve
// The mma.sync kernel, for every GPU with tensor cores. The same three products on an H100's
// warpgroup instruction are a second checked solution, solutions/puzzle-12-hopper.cu
// (`runner check puzzle-12 --solution=hopper`). (This file names none of sm_90a's instructions,
// so the runner compiles it for the GPU at hand.)


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

// ANCHOR: shape
// The outputs are cut into rows of ROW = 16 * MT outputs; row r starts at output ROW * r. Output b of
// row r is sum over k of x[ROW r + k] * w[k - b] (w is zero outside [0, kernel_size)), so the block of
// outputs Y^T[b][r] is the matrix product W X with W[b][k] = w[k - b] (a Toeplitz matrix: every
// diagonal holds one tap) and X[k][r] = x[ROW r + k] (row r of the input, shifted by ROW r).
// A warp computes 8 * NT rows (a pass) with mma.sync m16n8k8 tf32: M = b (MT tiles of 16), N = r (NT
// tiles of 8), K = k, walked 8 at a time (a k-step).
// The numbers (lab/p12/README.md, H100): 16 warps are 4 per sub-partition, enough to keep
// its tensor core busy (with one or two, the loads and the mma.sync chains leave it idle); 768
// outputs per warp make 12,288 per block: 122 blocks for the full case, one per SM, with 177,024
// bytes of shared memory.
#ifndef MT
#define MT 2
#endif
#ifndef NT
#define NT 3
#endif
#ifndef WARPS
#define WARPS 16
#endif
#ifndef PASSES
#define PASSES 1
#endif
#define ROW (16 * MT)
#define PASS (ROW * 8 * NT)
#define THREADS (32 * WARPS)
#define OUTPUTS_PER_BLOCK (PASS * WARPS * PASSES)
// k-steps for the longest kernel, rounded up to the window's period 2 MT (see the loop).
#define STEPS(k) (((k) + ROW - 1 + 8 * 2 * MT - 1) / (8 * 2 * MT) * (2 * MT))
#define MAX_STEPS STEPS(2047)
// Shared memory, in float4 slots: the taps as pairs (one slot per tap offset d, from d = -8), then
// the block's inputs as pairs (one slot per two inputs, 4 slots of padding after each row of ROW).
// Both hold one k-step more than the loop uses: it reads each k-step's operands one step ahead.
#define TAP_SLOTS (8 * MAX_STEPS + 16)
#define X_FLOATS (OUTPUTS_PER_BLOCK - ROW + 8 * MAX_STEPS + 8)
#define X_SLOTS (X_FLOATS / 2 + 4 * (X_FLOATS / ROW + 1))
#define SHARED_BYTES ((TAP_SLOTS + X_SLOTS) * 16)

extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// ANCHOR_END: shape

// D += A B on the tensor cores: A 16 x 8 (row-major fragment a), B 8 x 8 (fragment b), tf32.
__device__ __forceinline__ void mma(float (&d)[4], float a0, float a1, float a2, float a3, float b0, float b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)),
          "r"(__float_as_uint(a3)), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

// ANCHOR: stage
// Stages the taps and the block's inputs as split pairs, {hi(v[i]), hi(v[i + 1]), lo(v[i]),
// lo(v[i + 1])} in one float4 slot (zero outside the data):
// - taps[d + 8] holds the pair of w[d], for every d from -8 on;
// - the inputs pair at even p, in slot p / 2, and each row of ROW inputs is followed by 4 slots of
//   padding, so that the 8 rows (ROW inputs apart) that one B-fragment load reads fall in
//   different banks.
// Every global load of a thread is issued before its first store: the block waits for memory once.
__device__ __forceinline__ int x_slot(int p) { return p / 2 + 4 * (p / ROW); }

#define TAP_LOADS ((TAP_SLOTS + THREADS - 1) / THREADS)
#define X_LOADS ((X_FLOATS / 8 + THREADS - 1) / THREADS)
__device__ __forceinline__ void stage(float4* taps, float4* xs, const float* kernel, int kernel_size,
                                      int tap_slots, const float* input, int valid_inputs, int span)
{
    float w[TAP_LOADS][2];
#pragma unroll
    for (int u = 0; u < TAP_LOADS; u++) {
        int d = threadIdx.x + u * THREADS - 8;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            int k = d + j;
            w[u][j] = d + 8 < tap_slots && k >= 0 && k < kernel_size ? kernel[k] : 0.0f;
        }
    }
    // Eight inputs, p to p + 7, per thread and round: two float4 loads (p is a multiple of 8 and
    // the block's first input a multiple of 4: 16-byte aligned).
    float4 a[X_LOADS], b[X_LOADS];
#pragma unroll
    for (int u = 0; u < X_LOADS; u++) {
        int p = 8 * (threadIdx.x + u * THREADS);
        if (p + 8 <= valid_inputs && p < span) {
            a[u] = *reinterpret_cast<const float4*>(input + p);
            b[u] = *reinterpret_cast<const float4*>(input + p + 4);
        } else {
            float v[8];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                v[j] = p + j < valid_inputs && p < span ? input[p + j] : 0.0f;
            }
            a[u] = make_float4(v[0], v[1], v[2], v[3]);
            b[u] = make_float4(v[4], v[5], v[6], v[7]);
        }
    }
#pragma unroll
    for (int u = 0; u < TAP_LOADS; u++) {
        int i = threadIdx.x + u * THREADS;
        if (i < tap_slots) {
            taps[i] = split_pair(w[u][0], w[u][1]);
        }
    }
#pragma unroll
    for (int u = 0; u < X_LOADS; u++) {
        int p = 8 * (threadIdx.x + u * THREADS);
        if (p < span) {
            float4* slot = xs + x_slot(p);
            slot[0] = split_pair(a[u].x, a[u].y);
            slot[1] = split_pair(a[u].z, a[u].w);
            slot[2] = split_pair(b[u].x, b[u].y);
            slot[3] = split_pair(b[u].z, b[u].w);
        }
    }
}
// ANCHOR_END: stage

// ANCHOR: signature
extern "C" __global__ void __launch_bounds__(THREADS)
    conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
// ANCHOR_END: signature
{
    extern __shared__ float4 smem[];
    float4* taps = smem;
    float4* xs = smem + TAP_SLOTS;
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * OUTPUTS_PER_BLOCK;
    int steps = STEPS(kernel_size);
    int mine = min(OUTPUTS_PER_BLOCK, (output_size - first + PASS - 1) / PASS * PASS);
    stage(taps, xs, kernel, kernel_size, 8 * steps + 16, input + first, input_size - first,
          mine - ROW + 8 * steps + 8);
    __syncthreads();

    int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    for (int pass = 0; pass < PASSES; pass++) {
        int base = (warp * PASSES + pass) * PASS;  // the pass's first output, in the block
        if (first + base >= output_size) {
            break;
        }
        // ANCHOR: loop
        float acc[MT][NT][4] = {};
        float small[MT][NT][4] = {};  // the products with a remainder, 2^-11 of the rest
        // The k-step's 8 columns are ours to order (the same order in A and in B): lane t takes
        // columns 2t and 2t + 1 where mma.sync puts t and t + 4, so that each lane's operands
        // are neighbours in memory, one pair of a slot.
        // The window of A fragments. Tile mu at k-step s needs W rows 16 mu + g and 16 mu + g + 8,
        // columns 8 s + 2t and 8 s + 2t + 1: the pair of w[8 s + 2t - 16 mu - g] (a0, a2), and the
        // pair 8 taps earlier (a1, a3). With H[e] = the pair at d = 8 e + 2t - g, tile mu reads
        // H[s - 2 mu] and H[s - 2 mu - 1]: each k-step loads one new H, into slot s % (2 MT).
        float4 h[2 * MT];
#pragma unroll
        for (int e = 0; e < 2 * MT; e++) {
            h[e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // H[e < 0]: taps before w[0]
        }
        const float4* hp = taps + 8 + 2 * t - g;
        // B fragments: X[8 s + 2t][n] and X[8 s + 2t + 1][n] for row n = 8 nu + g of the pass:
        // the pair of x[ROW n + 8 s + 2t], one slot.
        const float4* xp = xs + x_slot(base + ROW * g + 2 * t);
        // The operands of the next k-step, loaded while this one multiplies.
        float4 h_next = hp[0], x_next[NT];
#pragma unroll
        for (int nu = 0; nu < NT; nu++) {
            x_next[nu] = xp[nu * (4 * ROW + 32)];
        }
        for (int s0 = 0; s0 < steps; s0 += 2 * MT) {
#pragma unroll
            for (int u = 0; u < 2 * MT; u++) {
                h[u] = h_next;
                float4 x[NT];
#pragma unroll
                for (int nu = 0; nu < NT; nu++) {
                    x[nu] = x_next[nu];
                }
                // k-step s + 1; after 2 MT k-steps (ROW inputs) the next row and its padding.
                int ahead = 4 * (u + 1) + (u + 1 == 2 * MT ? 4 : 0);
                h_next = hp[8 * (u + 1)];
#pragma unroll
                for (int nu = 0; nu < NT; nu++) {
                    x_next[nu] = xp[nu * (4 * ROW + 32) + ahead];
                }
#pragma unroll
                for (int mu = 0; mu < MT; mu++) {
                    float4 r0 = h[(u - 2 * mu + 2 * MT) % (2 * MT)];      // rows g: H[s - 2 mu]
                    float4 r8 = h[(u - 2 * mu - 1 + 2 * MT) % (2 * MT)];  // rows g + 8: H[s - 2 mu - 1]
#pragma unroll
                    for (int nu = 0; nu < NT; nu++) {
                        // .x, .y are the high parts, .z, .w the remainders.
                        mma(acc[mu][nu], r0.x, r8.x, r0.y, r8.y, x[nu].x, x[nu].y);
                        mma(small[mu][nu], r0.x, r8.x, r0.y, r8.y, x[nu].z, x[nu].w);
                        mma(small[mu][nu], r0.z, r8.z, r0.w, r8.w, x[nu].x, x[nu].y);
                    }
                }
            }
            hp += 8 * 2 * MT;
            xp += 4 * 2 * MT + 4;  // 2 MT k-steps are ROW inputs: one row, and its padding
        }
        // ANCHOR_END: loop

        // C fragment: element (b, n) = (16 mu + g (+ 8), 8 nu + 2 t (+ 1)), the output ROW n + b.
#pragma unroll
        for (int mu = 0; mu < MT; mu++) {
#pragma unroll
            for (int nu = 0; nu < NT; nu++) {
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    int o = first + base + ROW * (8 * nu + 2 * t + c % 2) + 16 * mu + g + 8 * (c / 2);
                    if (o < output_size) {
                        output[o] = acc[mu][nu][c] + small[mu][nu][c];
                    }
                }
            }
        }
    }
}
// ANCHOR_END: solve
