// Probe: can a kernel build a TMA tensor map itself (tensormap.replace on a zeroed 128-byte
// object) and load with it? Compares the bytes with the driver's cuTensorMapEncodeTiled and
// checks a 2D swizzled box (with out-of-bounds rows) element by element.
#ifndef __CUDACC_RTC__
#include <cuda.h>
#include <cstdio>
#include <cstring>
#include <vector>
#endif

#define CK(x) do { CUresult e = (x); if (e) { const char* s; cuGetErrorString(e, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)

__device__ __align__(128) unsigned char g_map[128];

__device__ void replace_all(unsigned sm, const float* src, int cols, int rows, int bc, int br, int mode)
{
    // mode bit 0: rank written as rank - 1; bit 1: box dims as dim - 1; bit 2: element strides 0
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(sm), "l"(src) : "memory");
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], %1;" ::"r"(sm), "r"((mode & 1) ? 1 : 2) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(sm), "r"(cols) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(sm), "r"(rows) : "memory");
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" ::"r"(sm), "l"((long long)cols * 4) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(sm), "r"((mode & 2) ? bc - 1 : bc) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(sm), "r"((mode & 2) ? br - 1 : br) : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(sm), "r"((mode & 4) ? 0 : 1) : "memory");
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(sm), "r"((mode & 4) ? 0 : 1) : "memory");
    asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 7;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 3;" ::"r"(sm) : "memory");
    asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;" ::"r"(sm) : "memory");
}

// One field at a time on zeros: which bytes does it write? field f, dumped to out[f*128..]
extern "C" __global__ void fields(const float* src, unsigned char* out)
{
    __shared__ __align__(128) unsigned char m[128];
    unsigned sm = (unsigned)__cvta_generic_to_shared(m);
    for (int f = 0; f < 12; f++) {
        if (threadIdx.x < 32) ((unsigned*)m)[threadIdx.x] = 0;
        __syncthreads();
        if (threadIdx.x == 0) {
            switch (f) {
            case 0: asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(sm), "l"(src) : "memory"); break;
            case 1: asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 2;" ::"r"(sm) : "memory"); break;
            case 2: asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, 64;" ::"r"(sm) : "memory"); break;
            case 3: asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, 300;" ::"r"(sm) : "memory"); break;
            case 4: asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, 256;" ::"r"(sm) : "memory"); break;
            case 5: asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, 32;" ::"r"(sm) : "memory"); break;
            case 6: asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, 256;" ::"r"(sm) : "memory"); break;
            case 7: asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;" ::"r"(sm) : "memory"); break;
            case 8: asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 7;" ::"r"(sm) : "memory"); break;
            case 9: asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 3;" ::"r"(sm) : "memory"); break;
            case 10: asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 1;" ::"r"(sm) : "memory"); break;
            case 11: asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 2;" ::"r"(sm) : "memory"); break;
            }
        }
        __syncthreads();
        if (threadIdx.x < 128) out[f * 128 + threadIdx.x] = m[threadIdx.x];
        __syncthreads();
    }
}

extern "C" __global__ void build(const float* src, int cols, int rows, int mode, unsigned char* out)
{
    __shared__ __align__(128) unsigned char m[128];
    unsigned sm = (unsigned)__cvta_generic_to_shared(m);
    if (threadIdx.x < 32) ((unsigned*)m)[threadIdx.x] = 0;
    __syncthreads();
    if (threadIdx.x == 0) replace_all(sm, src, cols, rows, 32, 256, mode);
    __syncthreads();
    if (threadIdx.x < 128) out[threadIdx.x] = m[threadIdx.x];
}

// Build (mode), publish to g_map, load box (c0, r0) with it; dump the shared box (32 x 256 floats).
extern "C" __global__ void load(const float* src, int cols, int rows, int mode, int c0, int r0, float* out, const unsigned* tmpl)
{
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ __align__(128) unsigned char m[128];
    __shared__ __align__(8) unsigned long long bar;
    unsigned base = ((unsigned)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
    unsigned char* box = smem + (base - (unsigned)__cvta_generic_to_shared(smem));
    unsigned sm = (unsigned)__cvta_generic_to_shared(m), sb = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x < 32) ((unsigned*)m)[threadIdx.x] = tmpl ? tmpl[threadIdx.x] : 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        replace_all(sm, src, cols, rows, 32, 256, mode);
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sb));
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;" ::"l"(g_map), "r"(sm) : "memory");
    }
    if (threadIdx.x == 0) {
        asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(g_map) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sb), "r"(32 * 256 * 4) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(base), "l"(g_map), "r"(c0), "r"(r0), "r"(sb) : "memory");
    }
    asm volatile("{\n.reg .pred p;\nW:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n@!p bra W;\n}" ::"r"(sb) : "memory");
    for (int i = threadIdx.x; i < 32 * 256; i += blockDim.x) out[i] = ((float*)box)[i];
}

#ifndef __CUDACC_RTC__
int main()
{
    CK(cuInit(0));
    CUdevice dev; CK(cuDeviceGet(&dev, 0));
    CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
    const int C = 64, R = 300;
    std::vector<float> h(C * R);
    for (int i = 0; i < C * R; i++) h[i] = (float)i;
    CUdeviceptr src, out, outf; CK(cuMemAlloc(&src, C * R * 4)); CK(cuMemcpyHtoD(src, h.data(), C * R * 4));
    CK(cuMemAlloc(&out, 12 * 128)); CK(cuMemAlloc(&outf, 32 * 256 * 4));
    CUtensorMap hm; memset(&hm, 0, sizeof hm);
    cuuint64_t gd[2] = {C, R}, gs[1] = {C * 4};
    cuuint32_t bd[2] = {32, 256}, es[2] = {1, 1};
    CK(cuTensorMapEncodeTiled(&hm, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void*)src, gd, gs, bd, es,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    auto dump = [](const char* name, const unsigned char* b) {
        printf("%-8s", name);
        for (int i = 0; i < 128; i++) { printf("%02x", b[i]); if (i % 16 == 15) printf(i == 127 ? "\n" : " "); }
    };
    dump("host", (const unsigned char*)&hm);
    CUmodule mod; CK(cuModuleLoad(&mod, "probe.cubin"));
    CUfunction ff, fb, fl;
    CK(cuModuleGetFunction(&ff, mod, "fields")); CK(cuModuleGetFunction(&fb, mod, "build")); CK(cuModuleGetFunction(&fl, mod, "load"));
    void* a1[] = {&src, &out};
    CK(cuLaunchKernel(ff, 1, 1, 1, 128, 1, 1, 0, 0, a1, 0)); CK(cuCtxSynchronize());
    unsigned char fb_[12 * 128]; CK(cuMemcpyDtoH(fb_, out, 12 * 128));
    const char* names[] = {"addr", "rank2", "gdim0", "gdim1", "gstr0", "box0", "box1", "estr0", "f32", "swz3", "fill1", "estr1=2"};
    for (int f = 0; f < 12; f++) dump(names[f], fb_ + f * 128);
    int c = C, r = R;
    for (int mode = 0; mode < 8; mode++) {
        void* a2[] = {&src, &c, &r, &mode, &out};
        CK(cuLaunchKernel(fb, 1, 1, 1, 128, 1, 1, 0, 0, a2, 0)); CK(cuCtxSynchronize());
        unsigned char b[128]; CK(cuMemcpyDtoH(b, out, 128));
        char nm[16]; snprintf(nm, sizeof nm, "mode%d", mode);
        dump(nm, b);
        printf("  equal to host: %s\n", memcmp(b, &hm, 128) ? "no" : "YES");
    }
    CK(cuFuncSetAttribute(fl, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 40000));
    int tests[3][2] = {{32, 100}, {0, 200}, {0, -10}};
    CUdeviceptr tm; CK(cuMemAlloc(&tm, 128));
    // templates: 0 the host map itself (documented route), 1 zeros + host bytes 64..79, 2 zeros
    for (int tk = 0; tk < 3; tk++) {
        unsigned char tb[128]; memset(tb, 0, 128);
        if (tk == 0) memcpy(tb, &hm, 128);
        if (tk == 1) memcpy(tb + 64, (unsigned char*)&hm + 64, 16);
        CK(cuMemcpyHtoD(tm, tb, 128));
        int mode = 1;
        for (auto& t : tests) {
            int c0 = t[0], r0 = t[1];
            std::vector<float> o(32 * 256, -1.0f);
            CK(cuMemcpyHtoD(outf, o.data(), o.size() * 4));
            void* a3[] = {&src, &c, &r, &mode, &c0, &r0, &outf, &tm};
            CUresult e = cuLaunchKernel(fl, 1, 1, 1, 128, 1, 1, 40000, 0, a3, 0);
            if (!e) e = cuCtxSynchronize();
            if (e) { const char* s; cuGetErrorString(e, &s); printf("template %d load (%d,%d): %s\n", tk, c0, r0, s); return 0; }
            CK(cuMemcpyDtoH(o.data(), outf, o.size() * 4));
            int bad = 0;
            for (int row = 0; row < 256; row++)
                for (int kk = 0; kk < 32; kk++) {
                    int at = row * 32 + ((((kk >> 2) ^ (row & 7)) << 2) | (kk & 3));
                    int gr = r0 + row, gc = c0 + kk;
                    float want = gr >= 0 && gr < R && gc < C ? h[gr * C + gc] : 0.0f;
                    if (o[at] != want) bad++;
                }
            printf("template %d load (%d,%d): %d wrong of 8192\n", tk, c0, r0, bad);
        }
    }
    return 0;
}
#endif
