// How deep a recursive device function nests with the default stack (cudaLimitStackSize,
// 1 KiB per thread) before the launch fails, for three frame sizes: the measure behind the
// simulator's `sim::call::MAX_DEPTH` (issue 16). Run on a GPU machine:
//   nvcc -arch=sm_90 -Xptxas -v -o stack_probe bench/stack_probe.cu && ./stack_probe
// Each depth is launched with 64 threads in a child process of its own (a failed launch spoils
// its CUDA context; a first version reset the device instead, and every launch after the reset
// failed); a depth passes when the launch completes and every thread's result is the closed form.
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

// No local array: the frame holds the return address and the registers kept across the call.
__device__ __noinline__ unsigned plain(int n, unsigned x)
{
    if (n == 0) {
        return x;
    }
    // Two operations after the call: not an accumulator the compiler could turn into a loop.
    return (plain(n - 1, x * 3u + (unsigned)n) ^ x) + 1u;
}

// A local array of 8 words live across the call.
__device__ __noinline__ unsigned array8(int n, const unsigned* in)
{
    unsigned a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = in[(n + i) & 63] + (unsigned)i;
    }
    if (n == 0) {
        return a[0];
    }
    return (array8(n - 1, in) << 1) ^ a[(n * 5) & 7];
}

// A local array of 32 words live across the call.
__device__ __noinline__ unsigned array32(int n, const unsigned* in)
{
    unsigned a[32];
    for (int i = 0; i < 32; i++) {
        a[i] = in[(n + i) & 63] ^ (unsigned)i;
    }
    if (n == 0) {
        return a[0];
    }
    return (array32(n - 1, in) << 1) ^ a[(n * 7) & 31];
}

__global__ void run(int which, int n, const unsigned* in, unsigned* out)
{
    unsigned t = threadIdx.x;
    unsigned r = which == 0 ? plain(n, t) : which == 1 ? array8(n, in) : array32(n, in);
    out[t] = r;
}

static unsigned host_plain(int n, unsigned x)
{
    return n == 0 ? x : (host_plain(n - 1, x * 3u + (unsigned)n) ^ x) + 1u;
}

static unsigned host_array(int which, int n, const unsigned* in)
{
    int k = which == 1 ? 8 : 32;
    unsigned a[32];
    for (int i = 0; i < k; i++) {
        a[i] = which == 1 ? in[(n + i) & 63] + (unsigned)i : in[(n + i) & 63] ^ (unsigned)i;
    }
    if (n == 0) {
        return a[0];
    }
    return (host_array(which, n - 1, in) << 1) ^ a[which == 1 ? (n * 5) & 7 : (n * 7) & 31];
}

// In a child process: exit status 0 when depth n runs and gives the right results.
static int child(int which, int n)
{
    unsigned h[64], *d_in = 0, *d_out = 0, got[64];
    for (int i = 0; i < 64; i++) {
        h[i] = 0x9e3779b9u * (unsigned)(i + 1);
    }
    if (cudaMalloc(&d_in, sizeof h) != cudaSuccess || cudaMalloc(&d_out, sizeof got) != cudaSuccess ||
        cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess) {
        return 2;
    }
    run<<<1, 64>>>(which, n, d_in, d_out);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        e = cudaDeviceSynchronize();
    }
    if (e != cudaSuccess) {
        printf("  %d at depth %d: %s\n", which, n, cudaGetErrorString(e));
        return 1;
    }
    if (cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess) {
        return 2;
    }
    for (unsigned t = 0; t < 64; t++) {
        unsigned want = which == 0 ? host_plain(n, t) : host_array(which, n, h);
        if (got[t] != want) {
            printf("  %d at depth %d: thread %u gave %u, want %u\n", which, n, t, got[t], want);
            return 1;
        }
    }
    return 0;
}

// 1 when depth n passes (run in a fresh process), 0 when it fails.
static int passes(int which, int n)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int r = child(which, n);
        fflush(stdout);
        _exit(r);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main()
{
    // The parent never touches CUDA (a context does not survive fork).
    fflush(stdout);
    if (fork() == 0) {
        size_t stack = 0;
        cudaDeviceGetLimit(&stack, cudaLimitStackSize);
        cudaDeviceProp p;
        cudaGetDeviceProperties(&p, 0);
        printf("device %s, default stack %zu bytes per thread\n", p.name, stack);
        fflush(stdout);
        _exit(0);
    }
    wait(0);
    const char* names[3] = {"plain", "array8", "array32"};
    for (int which = 0; which < 3; which++) {
        // The deepest passing depth: a linear scan near the edge after a doubling search.
        int lo = 0, hi = 1;
        while (hi < 4096 && passes(which, hi)) {
            lo = hi;
            hi *= 2;
        }
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (passes(which, mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // Recursion depth n nests n + 1 calls of the function below the kernel.
        printf("%s: depth %d passes, %d fails (%d nested calls)\n", names[which], lo, hi, lo + 1);
    }
    return 0;
}
