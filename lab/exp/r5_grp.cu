// Puzzle 08: as fast as the hardware allows (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// You choose the launch: declare it in this file as
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// Round 5 tuning record (lab/NOTES.md): r4_seg.cu with a thread's outputs split into two runs, QA
// outputs in the first part of the block's range and QB in the second, each with its own rotating
// window of S segments of TC floats; the taps (uniform) are shared by both runs, so one tap feeds
// QA + QB FFMAs while the loop holds only (QA + QB) * S * TC of them. Each variant is this file with
// its macros defined first. QB = 0 is r4_seg.cu.
#ifndef THREADS
#define THREADS 384
#endif
#ifndef QA
#define QA 16
#endif
#ifndef QB
#define QB 14
#endif
#ifndef QC
#define QC 0
#endif
#ifndef TC
#define TC 4
#endif
#define QMAX (QA > QB ? (QA > QC ? QA : QC) : (QB > QC ? QB : QC))
#ifndef SEG
#define S ((QMAX + TC - 1 + TC - 1) / TC)
#else
#define S SEG
#endif
#ifndef NACC
#define NACC 1
#endif
#define STEP (S * TC)
static_assert(S * TC >= QMAX + TC - 1, "window too small");
#define PER_THREAD (QA + QB + QC)
#define OUTPUTS_PER_BLOCK (THREADS * PER_THREAD)
#define MAX_TAPS ((2047 + STEP - 1) / STEP * STEP)
// taps, zero-padded, plus one step read ahead
#define TAPS_REGION ((MAX_TAPS + STEP + 3) / 4 * 4)
#define X_FLOATS ((OUTPUTS_PER_BLOCK + MAX_TAPS + STEP + 3) / 4 * 4)
#define SHARED_BYTES ((TAPS_REGION + X_FLOATS) * 4)

extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};

#define STAGE_LOADS ((TAPS_REGION + X_FLOATS) / 4 + THREADS - 1) / THREADS
__device__ __forceinline__ void stage(float4* smem, const float* kernel, int kernel_size, int region,
                                      const float* input, int valid_inputs, int taps)
{
    const int n_taps = region / 4, n_all = n_taps + (OUTPUTS_PER_BLOCK + taps + STEP + 3) / 4;
    float4 q[STAGE_LOADS];
#pragma unroll
    for (int u = 0; u < STAGE_LOADS; u++) {
        int v = threadIdx.x + u * THREADS;
        const float* src = v < n_taps ? kernel + 4 * v : input + 4 * (v - n_taps);
        int valid = v < n_taps ? kernel_size - 4 * v : valid_inputs - 4 * (v - n_taps);
        if (v >= n_all) valid = 0;
        if (valid >= 4) {
            q[u] = *reinterpret_cast<const float4*>(src);
        } else {
            q[u].x = valid > 0 ? src[0] : 0.0f;
            q[u].y = valid > 1 ? src[1] : 0.0f;
            q[u].z = valid > 2 ? src[2] : 0.0f;
            q[u].w = 0.0f;
        }
    }
#pragma unroll
    for (int u = 0; u < STAGE_LOADS; u++) {
        int v = threadIdx.x + u * THREADS;
        if (v < n_all) smem[v] = q[u];
    }
}

// TC floats from src, in reads of A floats (A = 4, 2 or 1: what src's alignment allows).
template <int A>
__device__ __forceinline__ void load(float (&v)[TC], const float* src)
{
#pragma unroll
    for (int q = 0; q < TC; q += A) {
        if (A == 4 && TC % 4 == 0) {
            float4 f = *reinterpret_cast<const float4*>(src + q);
            v[q] = f.x, v[q + 1] = f.y, v[q + 2] = f.z, v[q + 3] = f.w;
        } else if (A >= 2 && TC % 2 == 0) {
            float2 f = *reinterpret_cast<const float2*>(src + q);
            v[q] = f.x, v[q + 1] = f.y;
        } else {
            v[q] = src[q];
        }
    }
}
// The widest read that every thread's run of Q (and every chunk offset) allows.
#define AL(Q) ((Q) % 4 == 0 && TC % 4 == 0 ? 4 : (Q) % 2 == 0 && TC % 2 == 0 ? 2 : 1)
#define TAL (TC % 4 == 0 ? 4 : TC % 2 == 0 ? 2 : 1)

template <int Q>
__device__ __forceinline__ void chunk(float (&acc)[NACC][QMAX], const float (&x)[S][TC], const float (&wt)[TC], int k)
{
#pragma unroll
    for (int jj = 0; jj < TC; jj++) {
#pragma unroll
        for (int r = 0; r < Q; r++) {
            int i = r + jj;
            acc[jj % NACC][r] = fmaf(x[(k + i / TC) % S][i % TC], wt[jj], acc[jj % NACC][r]);
        }
    }
}

template <int Q>
__device__ __forceinline__ void store(float* output, int o, int output_size, const float (&acc)[NACC][QMAX])
{
    float v[QMAX];
#pragma unroll
    for (int r = 0; r < Q; r++) {
        v[r] = acc[0][r];
#pragma unroll
        for (int a = 1; a < NACC; a++) v[r] += acc[a][r];
    }
    if (o + Q <= output_size && Q % 2 == 0) {
#pragma unroll
        for (int q = 0; q < Q / 2; q++) reinterpret_cast<float2*>(output + o)[q] = make_float2(v[2 * q], v[2 * q + 1]);
    } else {
#pragma unroll
        for (int r = 0; r < Q; r++)
            if (o + r < output_size) output[o + r] = v[r];
    }
}

#ifdef MAXNREG
#define BOUNDS __maxnreg__(MAXNREG)
#else
#define BOUNDS __launch_bounds__(THREADS)
#endif
extern "C" __global__ void BOUNDS
    conv1d(const float* input, const float* kernel, float* output, int input_size, int kernel_size)
{
    extern __shared__ float4 smem[];
    int output_size = input_size - kernel_size + 1;
    int first = blockIdx.x * OUTPUTS_PER_BLOCK;
    int taps = (kernel_size + STEP - 1) / STEP * STEP;
    int region = (taps + STEP + 3) / 4 * 4;
    stage(smem, kernel, kernel_size, region, input + first, input_size - first, taps);
    __syncthreads();

    const float* w = reinterpret_cast<const float*>(smem);
    const float* xs = w + region;
    const int oa = threadIdx.x * QA, ob = THREADS * QA + threadIdx.x * QB,
              oc = THREADS * (QA + QB) + threadIdx.x * QC;
    float acca[NACC][QMAX], accb[NACC][QMAX], accc[NACC][QMAX];
#pragma unroll
    for (int r = 0; r < QMAX; r++)
#pragma unroll
        for (int a = 0; a < NACC; a++) acca[a][r] = accb[a][r] = accc[a][r] = 0.0f;
    float xa[S][TC], xb[S][TC], xc[S][TC], wt[S][TC];
#pragma unroll
    for (int s = 0; s < S; s++) {
        load<AL(QA)>(xa[s], xs + oa + s * TC);
        if (QB) load<AL(QB)>(xb[s], xs + ob + s * TC);
        if (QC) load<AL(QC)>(xc[s], xs + oc + s * TC);
    }
#ifndef TAPS_EARLY
#define TAPS_EARLY 0
#endif
    // TAPS_EARLY 0: a chunk's taps are read one chunk ahead; 1: a whole step ahead, into the slot
    // that the chunk just finished with (like the window).
#pragma unroll
    for (int s = 0; s < (TAPS_EARLY ? S : 1); s++) load<TAL>(wt[s], w + s * TC);
    for (int c = 0; c < taps; c += STEP) {
#pragma unroll
        for (int k = 0; k < S; k++) {
            if (!TAPS_EARLY) load<TAL>(wt[(k + 1) % S], w + c + (k + 1) * TC);
            chunk<QA>(acca, xa, wt[k], k);
            if (QB) chunk<QB>(accb, xb, wt[k], k);
            if (QC) chunk<QC>(accc, xc, wt[k], k);
            load<AL(QA)>(xa[k], xs + oa + c + (k + S) * TC);
            if (QB) load<AL(QB)>(xb[k], xs + ob + c + (k + S) * TC);
            if (QC) load<AL(QC)>(xc[k], xs + oc + c + (k + S) * TC);
            if (TAPS_EARLY) load<TAL>(wt[k], w + c + (k + S) * TC);
        }
    }
    store<QA>(output, first + oa, output_size, acca);
    if (QB) store<QB>(output, first + ob, output_size, accb);
    if (QC) store<QC>(output, first + oc, output_size, accc);
}
