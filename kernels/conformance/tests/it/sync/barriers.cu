// Warp-specialized producer/consumer kernels with named barriers, mbarrier and setmaxnreg,
// written as a learner would with inline PTX (compute_90a: `setmaxnreg` and `try_wait`).
// Each kernel is k(const float* in, float* out, int n); `sim_named_barriers`, `sim_mbarrier`
// and `gpu_barriers` run them. Kernels named `*_ok` are correct; the others carry one bug.

#define ITERS 12

__device__ __forceinline__ unsigned smem(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// --- Named barriers: warps 0-1 produce into buf, warps 2-3 consume (block of 128) ---------
// Barrier 1 (`full`) says buf is full, barrier 2 (`empty`) that it is empty again; the
// instructions are the macro's arguments (the ids in registers where they name `%0`).
#define NAMED(name, SYNC, ARRIVE)                                                          \
    extern "C" __global__ void name(const float* in, float* out, int n) {                  \
        __shared__ float buf[64];                                                          \
        int t = threadIdx.x, full = n / 64, empty = n / 32; /* 1 and 2 for n = 64 */       \
        for (int k = 0; k < ITERS; ++k) {                                                  \
            if (t < 64) {                                                                  \
                if (k > 0) asm volatile(SYNC(2) :: "r"(empty) : "memory");                 \
                buf[t] = in[k * 64 + t];                                                   \
                asm volatile(ARRIVE(1) :: "r"(full) : "memory");                           \
            } else {                                                                       \
                asm volatile(SYNC(1) :: "r"(full) : "memory");                             \
                out[k * 64 + (t - 64)] = buf[63 - (t - 64)] * 2.0f + 1.0f;                 \
                asm volatile(ARRIVE(2) :: "r"(empty) : "memory");                          \
            }                                                                              \
        }                                                                                  \
    }
#define BAR_SYNC(id) "bar.sync " #id ", 128;"
#define BAR_ARRIVE(id) "bar.arrive " #id ", 128;"
#define BARRIER_SYNC(id) "barrier.sync.aligned %0, 128;"
#define BARRIER_ARRIVE(id) "barrier.arrive.aligned %0, 128;"
NAMED(named_ok, BAR_SYNC, BAR_ARRIVE)
NAMED(named_aligned_ok, BARRIER_SYNC, BARRIER_ARRIVE)

// Every thread writes its word, then all sync on barrier 3 and read their neighbour's, in
// the same warp: the barrier orders the lanes of one warp too.
extern "C" __global__ void named_same_warp_ok(const float* in, float* out, int n) {
    __shared__ float buf[128];
    int t = threadIdx.x;
    for (int k = 0; k < ITERS * 64 / 128; ++k) {
        buf[t] = in[k * 128 + t];
        asm volatile("bar.sync 3, 128;" ::: "memory");
        out[k * 128 + t] = buf[t ^ 1];
        asm volatile("bar.sync 3, 128;" ::: "memory");
    }
}

// Block of 192: the producers arrive expecting 128 threads, the consumers sync expecting 192,
// and warps 4-5 never come.
extern "C" __global__ void named_count_mismatch(const float* in, float* out, int n) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    if (t < 64) {
        buf[t] = in[t];
        asm volatile("bar.arrive 1, 128;" ::: "memory");
    } else if (t < 128) {
        asm volatile("bar.sync 1, 192;" ::: "memory");
        out[t - 64] = buf[127 - t];
    }
}

// Barrier id n / 4 = 16 for n = 64: past the 16 barriers.
extern "C" __global__ void named_bad_id(const float* in, float* out, int n) {
    int id = n / 4;
    asm volatile("bar.sync %0, 128;" :: "r"(id) : "memory");
    if (threadIdx.x < 64) out[threadIdx.x] = in[threadIdx.x];
}

#ifndef CORRECT_ONLY  // ptxas refuses the constant; the GPU test leaves it out
extern "C" __global__ void named_bad_count(const float* in, float* out, int n) {
    asm volatile("bar.sync 1, 48;" ::: "memory");
    if (threadIdx.x < 64) out[threadIdx.x] = in[threadIdx.x];
}
#endif

// The producers forget their `bar.arrive`.
extern "C" __global__ void named_missing_arrive(const float* in, float* out, int n) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    if (t < 64) {
        buf[t] = in[t];
    } else {
        asm volatile("bar.sync 1, 128;" ::: "memory");
        out[t - 64] = buf[127 - t];
    }
}

// The consumers arrive instead of syncing: their reads are not ordered after the writes.
extern "C" __global__ void named_reader_does_not_wait(const float* in, float* out, int n) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    if (t < 64) {
        buf[t] = in[t];
        asm volatile("bar.arrive 1, 128;" ::: "memory");
    } else {
        asm volatile("bar.arrive 1, 128;" ::: "memory");
        out[t - 64] = buf[127 - t];
    }
}

// --- setmaxnreg: warpgroup 0 gives registers away, warpgroup 1 takes them (block of 256) ----
extern "C" __global__ void maxnreg_ok(const float* in, float* out, int n) {
    int t = threadIdx.x;
    if (t < 128) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        for (int i = t - 128; i < ITERS * 64; i += 128) out[i] = in[i] + 1.0f;
    }
}

#ifndef CORRECT_ONLY  // ptxas refuses the constant; the GPU test leaves it out
extern "C" __global__ void maxnreg_bad_count(const float* in, float* out, int n) {
    int t = threadIdx.x;
    if (t < 128) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 20;");
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        if (t - 128 < 64) out[t - 128] = in[t - 128] + 1.0f;
    }
}
#endif

extern "C" __global__ void maxnreg_half_warp(const float* in, float* out, int n) {
    int t = threadIdx.x;
    if (t % 32 < 16) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    if (t < 64) out[t] = in[t] + 1.0f;
}

// --- mbarrier: warp 0 produces into a ring of 3 stages, warps 1-2 consume (block of 96) ------
// full[s]: the 32 producer threads arrive after writing stage s; empty[s]: the 64 consumer
// threads arrive after reading it. Iteration k uses stage k % 3 in its (k / 3)-th round.
#define STAGES 3

__device__ __forceinline__ void mb_init(unsigned long long* b, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem(b)), "r"(count) : "memory");
}

__device__ __forceinline__ void mb_arrive(unsigned long long* b) {
    asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.release.cta.shared::cta.b64 state, [%0];\n\t}"
                 :: "r"(smem(b)) : "memory");
}

__device__ __forceinline__ void mb_wait(unsigned long long* b, unsigned parity) {
    asm volatile("{\n\t.reg .pred p;\n\tLAB_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra LAB_WAIT;\n\t}"
                 :: "r"(smem(b)), "r"(parity) : "memory");
}

__device__ __forceinline__ void mb_init_all(unsigned long long* full, unsigned long long* empty,
                                            unsigned producers, unsigned consumers) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mb_init(&full[s], producers);
            mb_init(&empty[s], consumers);
        }
    }
    __syncthreads();
}

// The consumers' half: wait for stage s of round r, read it reversed, free it.
__device__ __forceinline__ void consume(float (*ring)[64], unsigned long long* full,
                                       unsigned long long* empty, float* out, int c, bool wait) {
    for (int k = 0; k < ITERS; ++k) {
        int s = k % STAGES, r = k / STAGES;
        if (wait) mb_wait(&full[s], r & 1);
        out[k * 64 + c] = ring[s][63 - c] * 3.0f - 0.5f;
        mb_arrive(&empty[s]);
    }
}

// The producer's half: wait for stage s to be empty (the parity `flip` flips), fill it, and
// arrive on full for the first `arrivals` iterations.
__device__ __forceinline__ void produce(float (*ring)[64], unsigned long long* full,
                                       unsigned long long* empty, const float* in, int t,
                                       unsigned flip, int arrivals) {
    for (int k = 0; k < ITERS; ++k) {
        int s = k % STAGES, r = k / STAGES;
        mb_wait(&empty[s], (r & 1) ^ flip);
        ring[s][t] = in[k * 64 + t];
        ring[s][t + 32] = in[k * 64 + t + 32];
        if (k < arrivals) mb_arrive(&full[s]);
    }
}

#define RING(name, flip, arrivals, wait)                                                   \
    extern "C" __global__ void name(const float* in, float* out, int n) {                  \
        __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];            \
        __shared__ float ring[STAGES][64];                                                 \
        mb_init_all(full, empty, 32, 64);                                                  \
        int t = threadIdx.x;                                                               \
        if (t < 32) produce(ring, full, empty, in, t, flip, arrivals);                     \
        else consume(ring, full, empty, out, t - 32, wait);                                \
    }
RING(mbar_ring_ok, 1, ITERS, true)
// The producer waits on the empty stages with the wrong parity: the first wait is for a
// phase nobody completes.
RING(mbar_wrong_parity, 0, ITERS, true)
// The producer stops arriving after the first round.
RING(mbar_missing_arrive, 1, STAGES, true)
// The consumers read the stages without waiting for them to be full.
RING(mbar_no_wait, 1, ITERS, false)

// The consumers with one elected lane a warp: lane 0 waits for the stage, the warp meets it at
// SYNC (a __syncwarp(), or nothing), every lane reads, and after a __syncwarp() lane 0 frees the
// stage for its warp (empty expects one arrival a consumer warp).
#define ELECTED(name, SYNC)                                                                \
    extern "C" __global__ void name(const float* in, float* out, int n) {                  \
        __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];            \
        __shared__ float ring[STAGES][64];                                                 \
        mb_init_all(full, empty, 32, 2);                                                   \
        int t = threadIdx.x;                                                               \
        if (t < 32) {                                                                      \
            produce(ring, full, empty, in, t, 1, ITERS);                                   \
            return;                                                                        \
        }                                                                                  \
        int c = t - 32;                                                                    \
        for (int k = 0; k < ITERS; ++k) {                                                  \
            int s = k % STAGES, r = k / STAGES;                                            \
            if (c % 32 == 0) mb_wait(&full[s], r & 1);                                     \
            SYNC;                                                                          \
            out[k * 64 + c] = ring[s][63 - c] * 3.0f - 0.5f;                               \
            __syncwarp();                                                                  \
            if (c % 32 == 0) mb_arrive(&empty[s]);                                         \
        }                                                                                  \
    }
ELECTED(mbar_elected_wait_ok, __syncwarp())
// The other lanes read without meeting the one that waited.
ELECTED(mbar_elected_no_syncwarp, (void)0)

// The producer copies with cp.async and lets each copy's landing arrive (`.noinc`: each of
// the 32 producer threads is one of full's 32 expected arrivals).
extern "C" __global__ void mbar_cpasync_ok(const float* in, float* out, int n) {
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    __shared__ __align__(16) float ring[STAGES][64];
    mb_init_all(full, empty, 32, 64);
    int t = threadIdx.x;
    if (t < 32) {
        for (int k = 0; k < ITERS; ++k) {
            int s = k % STAGES, r = k / STAGES;
            mb_wait(&empty[s], (r & 1) ^ 1);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 8;"
                         :: "r"(smem(&ring[s][2 * t])), "l"(in + k * 64 + 2 * t) : "memory");
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];"
                         :: "r"(smem(&full[s])) : "memory");
        }
    } else {
        consume(ring, full, empty, out, t - 32, true);
    }
}

// Only the empty barriers are initialized.
extern "C" __global__ void mbar_uninitialized(const float* in, float* out, int n) {
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    __shared__ float ring[STAGES][64];
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES; ++s) mb_init(&empty[s], 64);
    __syncthreads();
    int t = threadIdx.x;
    if (t < 32) {
        ring[0][t] = in[t];
        mb_arrive(&full[0]);
    } else {
        consume(ring, full, empty, out, t - 32, true);
    }
}

// full counts one arrival, but every producer thread arrives, not only lane 0.
extern "C" __global__ void mbar_over_arrival(const float* in, float* out, int n) {
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    __shared__ float ring[STAGES][64];
    mb_init_all(full, empty, 1, 64);
    int t = threadIdx.x;
    if (t < 32) {
        ring[0][t] = in[t];
        ring[0][t + 32] = in[t + 32];
        mb_arrive(&full[0]);
    } else {
        mb_wait(&full[0], 0);
        out[t - 32] = ring[0][95 - t];
    }
}

// An ordinary store into an mbarrier object's bytes.
extern "C" __global__ void mbar_plain_store(const float* in, float* out, int n) {
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    mb_init_all(full, empty, 32, 64);
    if (threadIdx.x == 5) full[1] = 0;
    if (threadIdx.x < 64) out[threadIdx.x] = in[threadIdx.x];
}

// The other forms: each consumer thread arrives with a count of 1 on `done` and waits with
// its state token (`test_wait`, then `try_wait`), reads the pending count back from the
// token; thread 0 invalidates `done` at the end and initializes it again for a second use.
extern "C" __global__ void mbar_token_ok(const float* in, float* out, int n) {
    __shared__ __align__(8) unsigned long long done;
    __shared__ float buf[64];
    int t = threadIdx.x;
    for (int round = 0; round < 2; ++round) {
        if (t == 0) mb_init(&done, 64);
        __syncthreads();
        buf[t] = in[round * 64 + t];
        unsigned long long state;
        unsigned pending, ok;
        asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], 1;"
                     : "=l"(state) : "r"(smem(&done)) : "memory");
        asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(state));
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(ok) : "r"(smem(&done)), "l"(state) : "memory");
        if (!ok) {
            asm volatile("{\n\t.reg .pred p;\n\tWAIT:\n\t"
                         "mbarrier.try_wait.acquire.cta.shared::cta.b64 p, [%0], %1, 1000;\n\t"
                         "@!p bra WAIT;\n\t}"
                         :: "r"(smem(&done)), "l"(state) : "memory");
        }
        out[round * 64 + t] = buf[63 - t] + (float)(pending >= 1 && pending <= 64) + (float)ok * 0.0f;
        __syncthreads();
        if (t == 0) asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(smem(&done)) : "memory");
        __syncthreads();
    }
    for (int i = 128 + t; i < ITERS * 64; i += 64) out[i] = 0.0f;
}

// `init` again while the consumers are still arriving on the object.
extern "C" __global__ void mbar_reinit_in_use(const float* in, float* out, int n) {
    __shared__ __align__(8) unsigned long long done;
    int t = threadIdx.x;
    if (t == 0) mb_init(&done, 64);
    __syncthreads();
    if (t >= 32) mb_arrive(&done);
    __syncthreads();
    if (t == 0) mb_init(&done, 64);
    for (int i = t; i < ITERS * 64; i += 64) out[i] = in[i];
}

// --- Bulk copies, the TMA unit's one-dimensional form (block of 96) ------------------------
// Lane 0 of warp 0 fills stage s of the ring with one 256-byte `cp.async.bulk` that completes
// on full[s], which expects one arrival and the copy's bytes (`arrive.expect_tx`); the 64
// consumers read it reversed, write their results into one of two staging rows, and thread
// 32 stores the row with a bulk copy to global memory, first waiting (`wait_group.read 1`)
// until the store of two iterations before has read that row.
__device__ __forceinline__ void bulk_load(float* dst, const float* src, unsigned bytes,
                                          unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];"
                 :: "r"(smem(dst)), "l"(src), "r"(bytes), "r"(smem(bar)) : "memory");
}

__device__ __forceinline__ void expect_bytes(unsigned long long* b, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(smem(b)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void bulk_store(float* dst, const float* src, unsigned bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :: "l"(dst), "r"(smem(src)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// EXPECT: the bytes full[s] expects; WAIT_FULL: the consumers wait for the stage; WAIT_READ:
// thread 32 waits for the store two iterations back; SKEW: floats the load's destination is
// off its 16-byte alignment.
#define BULK(name, EXPECT, WAIT_FULL, WAIT_READ, SKEW)                                     \
    extern "C" __global__ void name(const float* in, float* out, int n) {                  \
        __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];            \
        __shared__ __align__(16) float ring[STAGES][68];                                   \
        __shared__ __align__(16) float staged[2][64];                                      \
        mb_init_all(full, empty, 1, 64);                                                   \
        int t = threadIdx.x;                                                               \
        if (t == 0) {                                                                      \
            for (int k = 0; k < ITERS; ++k) {                                              \
                int s = k % STAGES, r = k / STAGES;                                        \
                mb_wait(&empty[s], (r & 1) ^ 1);                                           \
                expect_bytes(&full[s], EXPECT);                                            \
                bulk_load(ring[s] + SKEW, in + k * 64, 256, &full[s]);                     \
            }                                                                              \
        } else if (t >= 32) {                                                              \
            int c = t - 32;                                                                \
            for (int k = 0; k < ITERS; ++k) {                                              \
                int s = k % STAGES, r = k / STAGES;                                        \
                if (WAIT_FULL) mb_wait(&full[s], r & 1);                                   \
                float v = ring[s][63 - c] * 3.0f - 0.5f;                                   \
                mb_arrive(&empty[s]);                                                      \
                if (c == 0 && WAIT_READ)                                                   \
                    asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");         \
                asm volatile("bar.sync 1, 64;" ::: "memory");                              \
                staged[k & 1][c] = v;                                                      \
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");               \
                asm volatile("bar.sync 1, 64;" ::: "memory");                              \
                if (c == 0) bulk_store(out + k * 64, staged[k & 1], 256);                  \
            }                                                                              \
            if (c == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");          \
        }                                                                                  \
    }
BULK(bulk_ring_ok, 256, 1, 1, 0)
// full expects 128 bytes, the copy brings 256: the count ends at -128, never zero.
BULK(bulk_short_expect, 128, 1, 1, 0)
// full expects 512 bytes, the copy brings 256: the phase waits for 256 more.
BULK(bulk_long_expect, 512, 1, 1, 0)
// The consumers read the stage without waiting for the copy.
BULK(bulk_no_wait, 256, 0, 1, 0)
// Thread 32 reuses a staging row without waiting for the store that reads it.
BULK(bulk_no_read_wait, 256, 1, 0, 0)
// The load's destination is 4 bytes past a 16-byte boundary.
BULK(bulk_misaligned, 256, 1, 1, 1)

// Thread 0 loads 64 floats with one bulk copy; every thread (lanes 1-31 of warp 0 among them)
// waits on the mbarrier and reads them, with no __syncthreads(): the wait alone orders the copy
// before the reads (the PTX ISA's complete-tx), for the copying thread's own warp too.
extern "C" __global__ void bulk_wait_only_ok(const float* in, float* out, int n) {
    __shared__ __align__(8) unsigned long long full;
    __shared__ __align__(16) float buf[64];
    if (threadIdx.x == 0) mb_init(&full, 1);
    __syncthreads();
    for (int k = 0; k < ITERS; ++k) {
        if (threadIdx.x == 0) {
            expect_bytes(&full, 256);
            bulk_load(buf, in + k * 64, 256, &full);
        }
        mb_wait(&full, k & 1);
        if (threadIdx.x < 64) out[k * 64 + threadIdx.x] = buf[63 - threadIdx.x] * 3.0f - 0.5f;
        __syncthreads(); // everyone is done with buf before the next copy
    }
}

// The same, but the copying thread itself never waits and reads nothing: the other 31 lanes of
// its warp wait and read (WAIT_LANES 1); with WAIT_LANES 32 those 31 lanes read without waiting.
#define BULK_ISSUER(name, WAIT_LANES)                                                      \
extern "C" __global__ void name(const float* in, float* out, int n) {                      \
    __shared__ __align__(8) unsigned long long full;                                       \
    __shared__ __align__(16) float buf[64];                                                \
    if (threadIdx.x == 0) mb_init(&full, 1);                                               \
    __syncthreads();                                                                       \
    for (int k = 0; k < ITERS; ++k) {                                                      \
        int t = threadIdx.x;                                                               \
        if (t == 0) {                                                                      \
            expect_bytes(&full, 256);                                                      \
            bulk_load(buf, in + k * 64, 256, &full);                                       \
        } else {                                                                           \
            if (t >= WAIT_LANES) mb_wait(&full, k & 1);                                    \
            if (t <= 64) out[k * 64 + t - 1] = buf[64 - t] * 3.0f - 0.5f;                  \
        }                                                                                  \
        __syncthreads();                                                                   \
    }                                                                                      \
}
BULK_ISSUER(bulk_issuer_skips_wait_ok, 1)
BULK_ISSUER(bulk_issuer_warp_no_wait, 32)

// Thread 0 stores a row with a bulk store, then reads its last float back from global memory:
// after `wait_group 0` (WRITTEN 1) the store has written it; after `wait_group.read 0` alone
// (WRITTEN 0) the store has only read its source, and its writes may still be in flight.
#define BULK_BACK(name, WRITTEN)                                                           \
extern "C" __global__ void name(const float* in, float* out, int n) {                      \
    __shared__ __align__(16) float row[64];                                                \
    int t = threadIdx.x;                                                                   \
    for (int k = 0; k < ITERS; ++k) {                                                      \
        if (t < 64) row[t] = in[k * 64 + 63 - t] * 3.0f - 0.5f;                            \
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                       \
        __syncthreads();                                                                   \
        if (t == 0) {                                                                      \
            bulk_store(out + k * 64, row, 256);                                            \
            if (WRITTEN) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");         \
            else asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");            \
            if (out[k * 64 + 63] != row[63]) out[k * 64 + 63] = 0.0f;                     \
        }                                                                                  \
        __syncthreads();                                                                   \
    }                                                                                      \
}
BULK_BACK(bulk_store_back_ok, 1)
BULK_BACK(bulk_store_back_early, 0)

// --- elect.sync (block of 64): per iteration k, the whole warp elects (the `_|p` form), or
// lanes 8-15 alone (mask 0xff00), or the odd and the even lanes apart, in two branches; each
// thread writes 10 x the leader's lane + 1 if it was the one elected (997: it took no part).
__device__ __forceinline__ unsigned elect(unsigned mask, unsigned* leader) {
    unsigned d, p;
    asm volatile("{\n\t.reg .pred q;\n\telect.sync %0|q, %2;\n\tselp.u32 %1, 1, 0, q;\n\t}"
                 : "=r"(d), "=r"(p) : "r"(mask) : "memory");
    *leader = d;
    return p;
}

extern "C" __global__ void elect_ok(const float* in, float* out, int n) {
    int t = threadIdx.x, lane = t % 32;
    for (int k = 0; k < ITERS; ++k) {
        unsigned leader = 0, me = 0;
        if (k % 3 == 0) {
            asm volatile("{\n\t.reg .pred q;\n\telect.sync _|q, 0xffffffff;\n\t"
                         "selp.u32 %0, 1, 0, q;\n\t}" : "=r"(me) :: "memory");
        } else if (k % 3 == 1) {
            if (lane >= 8 && lane < 16) {
                me = elect(0x0000ff00u, &leader);
            } else {
                leader = 99;
                me = 7;
            }
        } else if (lane & 1) {
            me = elect(0xaaaaaaaau, &leader);
        } else {
            me = elect(0x55555555u, &leader);
        }
        out[k * 64 + t] = (float)(leader * 10 + me) + in[k * 64 + t] * 0.0f;
    }
}

// --- redux.sync (compute capability 8.0; block of 64): per iteration k, one reduction of
// v = the input's integer times a hash constant: k % 6 = 0 add over the warp, 1 signed min over
// lanes 0-15 alone, 2 unsigned max over the odd and the even lanes in two branches, 3 and,
// 4 or, 5 xor over the warp. Each thread writes the result's top 24 bits as a float.
extern "C" __global__ void redux_ok(const float* in, float* out, int n) {
    int t = threadIdx.x, lane = t % 32;
    for (int k = 0; k < ITERS; ++k) {
        unsigned v = (unsigned)(int)(in[k * 64 + t] * 4.0f) * 2654435761u, r = 0;
        switch (k % 6) {
        case 0: r = __reduce_add_sync(0xffffffffu, v); break;
        case 1:
            if (lane < 16) r = (unsigned)__reduce_min_sync(0x0000ffffu, (int)v);
            break;
        case 2:
            if (lane & 1) r = __reduce_max_sync(0xaaaaaaaau, v);
            else r = __reduce_max_sync(0x55555555u, v);
            break;
        case 3: r = __reduce_and_sync(0xffffffffu, v); break;
        case 4: r = __reduce_or_sync(0xffffffffu, v); break;
        default: r = __reduce_xor_sync(0xffffffffu, v); break;
        }
        out[k * 64 + t] = (float)(r >> 8);
    }
}

// --- TMA tensor copies through tensor maps the runner encodes (block of 96). The input is a
// tensor of 24 rows x 32 floats; per iteration k thread 0 loads the box of 8 rows x 32 floats at
// row 2k - 4 (rows outside the tensor read as zeros) into a stage, 128-byte swizzled; consumer c
// (threads 32-95) reads box element (c / 8, (c % 8) * 4 + k % 4), writes it times 3 less 0.5
// into a staging tile of 2 rows x 32 (swizzled the same way), and thread 32 stores the tile
// with a tensor store at row 2k of the output (24 x 32): out[k * 64 + c]. The job declares
// `tma_in_map` (the input, boxes of 32 x 8) and `tma_out_map` (the output, boxes of 32 x 2),
// both 128-byte swizzled (`sync::TMA_MAPS`); the copying threads acquire them at `.sys` scope.
// REBUILD: warp 0 copies the input's map into shared memory (zeros instead where ZEROS), sets
// its rank field to RANK with `tensormap.replace` (1: a 2D map) and publishes it to
// `tma_rebuilt` with `tensormap.cp_fenceproxy`, which the loads use (still the one in shared
// memory where SHARED_MAP); WAIT_FULL: the consumers wait for the stage; WAIT_READ: thread 32
// waits for the store two iterations back before the tile is rewritten; FENCE: the acquires.
__device__ __align__(128) unsigned char tma_in_map[128], tma_out_map[128], tma_rebuilt[128];

// The 128-byte swizzle of byte offset `b` from a 1024-byte-aligned base.
__device__ __forceinline__ unsigned swz(unsigned b) { return b ^ (((b >> 7) & 7) << 4); }

#define TMA(name, REBUILD, RANK, ZEROS, WAIT_FULL, WAIT_READ, SHARED_MAP, FENCE)           \
    extern "C" __global__ void name(const float* in, float* out, int n) {                  \
        __shared__ __align__(1024) float ring[STAGES][256];                                \
        __shared__ __align__(1024) float staged[2][64];                                    \
        __shared__ __align__(128) unsigned char map[128];                                  \
        __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];            \
        int t = threadIdx.x;                                                               \
        mb_init_all(full, empty, 1, 64);                                                   \
        if (REBUILD && t < 32) {                                                           \
            ((unsigned*)map)[t] = ZEROS ? 0u : ((const unsigned*)tma_in_map)[t];           \
            __syncwarp();                                                                  \
            if (t == 0)                                                                    \
                asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], %1;" \
                             :: "r"(smem(map)), "n"(RANK) : "memory");                     \
            __syncwarp();                                                                  \
            asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic"  \
                         ".release.gpu.sync.aligned [%0], [%1], 128;"                      \
                         :: "l"(tma_rebuilt), "r"(smem(map)) : "memory");                  \
        }                                                                                  \
        const void* map_in = SHARED_MAP ? (const void*)map                                 \
                           : REBUILD ? (const void*)tma_rebuilt : (const void*)tma_in_map; \
        const void* map_out = tma_out_map;                                                 \
        if (t == 0) {                                                                      \
            if (FENCE && REBUILD)                                                          \
                asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;"       \
                             :: "l"(tma_rebuilt) : "memory");                              \
            else if (FENCE)                                                                \
                asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;"       \
                             :: "l"(tma_in_map) : "memory");                               \
            for (int k = 0; k < ITERS; ++k) {                                              \
                int s = k % STAGES, r = k / STAGES;                                        \
                mb_wait(&empty[s], (r & 1) ^ 1);                                           \
                expect_bytes(&full[s], 1024);                                              \
                asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"         \
                             ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"   \
                             :: "r"(smem(ring[s])), "l"(map_in), "r"(0), "r"(2 * k - 4),   \
                                "r"(smem(&full[s])) : "memory");                           \
            }                                                                              \
        } else if (t >= 32) {                                                              \
            int c = t - 32;                                                                \
            if (c == 0 && FENCE)                                                           \
                asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;"       \
                             :: "l"(tma_out_map) : "memory");                              \
            for (int k = 0; k < ITERS; ++k) {                                              \
                int s = k % STAGES, r = k / STAGES;                                        \
                if (WAIT_FULL) mb_wait(&full[s], r & 1);                                   \
                unsigned at = (c / 8) * 128 + ((c % 8) * 4 + k % 4) * 4;                   \
                float v = ring[s][swz(at) / 4] * 3.0f - 0.5f;                              \
                mb_arrive(&empty[s]);                                                      \
                if (c == 0 && WAIT_READ)                                                   \
                    asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");         \
                asm volatile("bar.sync 1, 64;" ::: "memory");                              \
                staged[0][swz((k & 1) * 256 + c * 4) / 4] = v;                             \
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");               \
                asm volatile("bar.sync 1, 64;" ::: "memory");                              \
                if (c == 0) {                                                              \
                    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group" \
                                 " [%0, {%1, %2}], [%3];"                                  \
                                 :: "l"(map_out), "r"(0), "r"(2 * k),                      \
                                    "r"(smem(staged[k & 1])) : "memory");                  \
                    asm volatile("cp.async.bulk.commit_group;" ::: "memory");              \
                }                                                                          \
            }                                                                              \
            if (c == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");          \
        }                                                                                  \
    }
TMA(tma_ring_ok, 0, 1, 0, 1, 1, 0, 1)
// The input's map copied to shared memory, its rank field set (to the same rank), published
// and acquired: `tensormap.replace` on a map the driver encoded, as the PTX ISA has it.
TMA(tma_rebuilt_ok, 1, 1, 0, 1, 1, 0, 1)
// The rank field given the rank (2), not the rank less one: a 3D map for 2D copies.
TMA(tma_rank, 1, 2, 0, 1, 1, 0, 1)
// The rank written into a zeroed object, not into a valid map.
TMA(tma_zeros, 1, 1, 1, 1, 1, 0, 1)
// The consumers read a stage without waiting for its copy.
TMA(tma_no_wait, 0, 1, 0, 0, 1, 0, 1)
// Thread 32 rewrites a staging tile without waiting for the store that reads it.
TMA(tma_no_read_wait, 0, 1, 0, 1, 0, 0, 1)
// The loads name the map in shared memory, not the copy in global memory.
TMA(tma_shared_map, 1, 1, 0, 1, 1, 1, 1)
// The copying threads never acquire the maps the runner wrote.
TMA(tma_no_fence, 0, 1, 0, 1, 1, 0, 0)

// --- dp4a, dp2a and fns (block of 64): per iteration k, from two hashes u, v of the input,
// k % 6 = 0 __dp4a signed, 1 __dp4a unsigned, 2 dp4a.u32.s32, 3 __dp2a_lo signed,
// 4 dp2a.hi.s32.u32, 5 __fns(u, t % 32, offset) with offset from -32 to 32. Each thread
// writes the result folded to 24 bits, as a float.
extern "C" __global__ void intrin_ok(const float* in, float* out, int n) {
    int t = threadIdx.x;
    for (int k = 0; k < ITERS; ++k) {
        unsigned u = __float_as_uint(in[k * 64 + t]) * 2654435761u;
        unsigned v = (u ^ (u >> 13)) * 0x9E3779B9u, r = 0;
        switch (k % 6) {
        case 0: r = (unsigned)__dp4a((int)u, (int)v, (int)(u >> 7)); break;
        case 1: r = __dp4a(u, v, v >> 3); break;
        case 2: asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(u), "r"(v), "r"(v >> 5)); break;
        case 3: r = (unsigned)__dp2a_lo((int)u, (int)v, -9); break;
        case 4: asm("dp2a.hi.s32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(u), "r"(v), "r"(u >> 9)); break;
        default: r = __fns(u, t % 32, (int)(v % 65) - 32); break;
        }
        out[k * 64 + t] = (float)((r ^ (r >> 16)) & 0xffffffu);
    }
}
