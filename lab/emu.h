// A CPU stand-in for the few CUDA features the solutions of puzzles 04 to 08 use, so that
// conv_tune.cu can check their indexing with g++ on a machine without a GPU (`./tune.sh emu`).
// Blocks run one after another; the threads of a block run as std::threads meeting at a
// std::barrier for __syncthreads(). Dynamic shared memory is one static buffer (tune.sh rewrites
// `extern __shared__ T name[];` into a pointer to it). Not a simulator: no race or bounds checks.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline std::barrier<>* emu_barrier = nullptr;
inline void __syncthreads() { emu_barrier->arrive_and_wait(); }

struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline float2 make_float2(float x, float y) { return {x, y}; }

alignas(16) inline char emu_dynamic_shared[256 * 1024];

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)

template <class F>
void emu_launch(unsigned grid, unsigned block, F body)
{
    gridDim.x = grid;
    blockDim.x = block;
    for (unsigned b = 0; b < grid; b++) {
        std::memset(emu_dynamic_shared, 0x7f, sizeof emu_dynamic_shared);  // not zeros: stale data shows
        std::barrier<> bar(block);
        emu_barrier = &bar;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; t++) {
            threads.emplace_back([=] {
                threadIdx.x = t;
                blockIdx.x = b;
                body();
            });
        }
        for (auto& t : threads) {
            t.join();
        }
    }
}
