// Puzzle 12: convolution as matrix products, on tensor cores (the valid contract).
// output[i] = sum over j < kernel_size of input[i + j] * kernel[j], for i < input_size - kernel_size + 1
// 1 <= kernel_size <= input_size <= 1,500,000 and kernel_size <= 2047.
// Same contract, cases and tolerance as puzzle 08; declare the launch the same way:
//   extern "C" __device__ const int launch_shape[3] = {THREADS, OUTPUTS_PER_BLOCK, SHARED_BYTES};
// and the runner launches ceil(output_size / OUTPUTS_PER_BLOCK) blocks of THREADS threads with
// SHARED_BYTES bytes of dynamic shared memory (up to 227 KiB). No macros are defined for you.

// ANCHOR: solve
// Your code here: choose the shape, declare it, and write the kernel. This start compiles and
// launches (256 threads, 256 outputs per block, no shared memory) but computes nothing yet. The two
// helpers below are the PTX you need, written out: use them or write your own.
extern "C" __device__ const int launch_shape[3] = {256, 256, 0};

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
extern "C" __global__ void conv1d(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size)
// ANCHOR_END: signature
{
}
// ANCHOR_END: solve
