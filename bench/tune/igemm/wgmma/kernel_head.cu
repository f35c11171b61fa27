// Puzzle 11 on Hopper's warpgroup tensor-core instruction (wgmma, sm_90a), tuning version.
// The product is computed transposed: D^T[OC, M] = W^T[OC, K] x im2col^T[K, M], so that both of
// wgmma's operands are K-major: W^T comes from registers (each thread loads its fragment from a
// [k][oc] tile in shared memory, as mma.sync's A), and im2col^T is a tile of BLOCK_M pixel rows of
// 32 floats of K (128 bytes, channels contiguous) in shared memory with the 128-byte swizzle.
#ifndef BLOCK_M
#define BLOCK_M 128 // pixels a block (a multiple of 128: one m64n128k8 per 128)
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef INFLIGHT
#define INFLIGHT 0 // 1: keep one wgmma group in flight across the barrier
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#define BLOCK_N 128 // output channels a block: 2 warpgroups of 64
#define BLOCK_K 32
#define THREADS 256
#define NH (BLOCK_M / 128)
#define W_STRIDE (BLOCK_N + 8)
#define A_BYTES (BLOCK_M * 128)
#define W_BYTES (BLOCK_K * W_STRIDE * 4)
#define STAGE_BYTES (A_BYTES + W_BYTES)
#define SHARED_BYTES (STAGES * STAGE_BYTES + 1024)
#define LOOKAHEAD (STAGES - 1 - INFLIGHT)

static_assert(W_BYTES % 1024 == 0 && BLOCK_M % 128 == 0, "stages stay 1024-byte aligned");
static_assert(LOOKAHEAD >= 1, "at least one tile in flight");

extern "C" __device__ const int launch_shape[4] = {THREADS, BLOCK_M, BLOCK_N, SHARED_BYTES};
