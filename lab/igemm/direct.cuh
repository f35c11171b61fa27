// The harnesses' reference (tune.cu, wgmma/check.cu): a float32 direct convolution.
#pragma once

// One thread per output, float32 on the FMA units: the check's reference.
__global__ void direct(const float* x, const float* w, float* out, int batch, int rows, int cols,
                       int ic, int oc, int kr, int kc)
{
    int orow = rows - kr + 1, ocol = cols - kc + 1;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long total = (long long)batch * orow * ocol * oc;
    if (i >= total) return;
    int o = i % oc;
    long long m = i / oc;
    int c = m % ocol, r = m / ocol % orow, b = m / ((long long)ocol * orow);
    float s = 0.0f;
    for (int a = 0; a < kr; a++)
        for (int j = 0; j < kc; j++)
            for (int ch = 0; ch < ic; ch++)
                s += x[(((long long)b * rows + r + a) * cols + c + j) * ic + ch] *
                     w[((a * kc + j) * ic + ch) * oc + o];
    out[i] = s;
}
