// Puzzle 11 on Hopper's warpgroup tensor-core instruction (wgmma, sm_90a), tuning version.
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
