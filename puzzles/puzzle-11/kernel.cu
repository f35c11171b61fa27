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
// Your code here: choose the shape, declare it, and write the kernel. This start compiles and
// launches (128 threads per 64 x 64 tile of the product, no shared memory) but computes nothing.
// The two helpers below are the PTX you need for the tensor cores, written out (the same as
// puzzle 12's): use them or write your own.
extern "C" __device__ const int launch_shape[4] = {128, 64, 64, 0};

// x rounded to tf32 (the top 11 bits of its significand, to nearest, ties away from zero).
__device__ __forceinline__ float tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

// D += A B on the tensor cores, one warp: A 16 x 8 row-major, B 8 x 8, D 16 x 8, all lanes at once.
// Lane l holds g = l / 4, t = l % 4: a0 = A[g][t], a1 = A[g + 8][t], a2 = A[g][t + 4],
// a3 = A[g + 8][t + 4]; b0 = B[t][g], b1 = B[t + 4][g]; d = {D[g][2t], D[g][2t + 1], D[g + 8][2t],
// D[g + 8][2t + 1]}.
__device__ __forceinline__ void mma(float (&d)[4], float a0, float a1, float a2, float a3, float b0, float b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)),
          "r"(__float_as_uint(a3)), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

// ANCHOR: signature
extern "C" __global__ void conv2d_nhwc(const float* input, const float* weight, float* output,
                                       int batch, int input_rows, int input_cols,
                                       int input_channels, int output_channels, int kernel_rows,
                                       int kernel_cols)
// ANCHOR_END: signature
{
}
// ANCHOR_END: solve
