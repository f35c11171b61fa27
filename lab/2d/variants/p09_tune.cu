// Puzzle 09 tuning variants (one thread per output; the runner defines ROW_BLOCK and COL_BLOCK).
// MODE 0: the solution as it stood (two runtime loops, one load of input and tap per step).
// MODE 1: each kernel row taken 4 taps at a time, the loads of the 4 issued before the first
//         multiply-add (predicated past the row's end): 8 loads in flight instead of 2.
// MODE 2: as 1 with 8 taps at a time.
// MODE 5: RCH kernel rows x CH taps at a time (RCH * CH loads of each in flight).
// MODE 4: as 1, but the taps of the chunk read through the read-only path (__ldg) and the input too.
#ifndef MODE
#define MODE 0
#endif
#ifndef RCH
#define RCH 4
#endif
#ifndef CH
#define CH (MODE == 2 ? 8 : 4)
#endif

extern "C" __global__ void conv2d(const float* __restrict__ input, const float* __restrict__ kernel,
                                  float* __restrict__ output, int input_rows, int input_cols,
                                  int input_stride, int kernel_rows, int kernel_cols, int output_stride)
{
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    int r = blockIdx.y * ROW_BLOCK + threadIdx.y;
    int c = blockIdx.x * COL_BLOCK + threadIdx.x;
    if (r >= output_rows || c >= output_cols) {
        return;
    }
    float sum = 0.0f;
#if MODE == 0
    for (int i = 0; i < kernel_rows; i++) {
        const float* row = input + (r + i) * input_stride + c;
        for (int j = 0; j < kernel_cols; j++) {
            sum += row[j] * kernel[i * kernel_cols + j];
        }
    }
#elif MODE == 1 || MODE == 2 || MODE == 4
    for (int i = 0; i < kernel_rows; i++) {
        const float* row = input + (r + i) * input_stride + c;
        const float* taps = kernel + i * kernel_cols;
        for (int j = 0; j < kernel_cols; j += CH) {
            float x[CH], k[CH];
#pragma unroll
            for (int u = 0; u < CH; u++) {
#if MODE == 4
                x[u] = j + u < kernel_cols ? __ldg(row + j + u) : 0.0f;
                k[u] = j + u < kernel_cols ? __ldg(taps + j + u) : 0.0f;
#else
                x[u] = j + u < kernel_cols ? row[j + u] : 0.0f;
                k[u] = j + u < kernel_cols ? taps[j + u] : 0.0f;
#endif
            }
#pragma unroll
            for (int u = 0; u < CH; u++) {
                if (j + u < kernel_cols) {
                    sum += x[u] * k[u];
                }
            }
        }
    }
#elif MODE == 5
    // RCH kernel rows x CH taps at a time: every load of the block issued before the first
    // multiply-add; the sum goes row by row within the block.
    for (int i = 0; i < kernel_rows; i += RCH) {
        const float* row = input + (r + i) * input_stride + c;
        const float* taps = kernel + i * kernel_cols;
        for (int j = 0; j < kernel_cols; j += CH) {
            float x[RCH][CH], k[RCH][CH];
#pragma unroll
            for (int h = 0; h < RCH; h++) {
#pragma unroll
                for (int u = 0; u < CH; u++) {
                    bool ok = i + h < kernel_rows && j + u < kernel_cols;
                    x[h][u] = ok ? row[h * input_stride + j + u] : 0.0f;
                    k[h][u] = ok ? taps[h * kernel_cols + j + u] : 0.0f;
                }
            }
#pragma unroll
            for (int h = 0; h < RCH; h++) {
#pragma unroll
                for (int u = 0; u < CH; u++) {
                    if (i + h < kernel_rows && j + u < kernel_cols) {
                        sum += x[h][u] * k[h][u];
                    }
                }
            }
        }
    }
#elif MODE == 6
    // 3 x 3 blocks of taps as MODE 5, but a block wholly inside the kernel takes no tests.
    for (int i = 0; i < kernel_rows; i += 3) {
        const float* row = input + (r + i) * input_stride + c;
        const float* taps = kernel + i * kernel_cols;
        for (int j = 0; j < kernel_cols; j += 3) {
            float x[3][3], k[3][3];
            if (i + 3 <= kernel_rows && j + 3 <= kernel_cols) {
#pragma unroll
                for (int h = 0; h < 3; h++) {
#pragma unroll
                    for (int u = 0; u < 3; u++) {
                        x[h][u] = row[h * input_stride + j + u];
                        k[h][u] = taps[h * kernel_cols + j + u];
                    }
                }
#pragma unroll
                for (int h = 0; h < 3; h++) {
#pragma unroll
                    for (int u = 0; u < 3; u++) {
                        sum += x[h][u] * k[h][u];
                    }
                }
            } else {
#pragma unroll
                for (int h = 0; h < 3; h++) {
#pragma unroll
                    for (int u = 0; u < 3; u++) {
                        bool ok = i + h < kernel_rows && j + u < kernel_cols;
                        x[h][u] = ok ? row[h * input_stride + j + u] : 0.0f;
                        k[h][u] = ok ? taps[h * kernel_cols + j + u] : 0.0f;
                    }
                }
#pragma unroll
                for (int h = 0; h < 3; h++) {
#pragma unroll
                    for (int u = 0; u < 3; u++) {
                        if (i + h < kernel_rows && j + u < kernel_cols) {
                            sum += x[h][u] * k[h][u];
                        }
                    }
                }
            }
        }
    }
#elif MODE == 7
    // Each kernel row CH taps at a time as MODE 1, but all RCH rows' loads of one column chunk
    // first, with the input pointer stepping by rows (no predicate on the row).
    int i = 0;
    for (; i + 3 <= kernel_rows; i += 3) {
        const float* row = input + (r + i) * input_stride + c;
        const float* taps = kernel + i * kernel_cols;
        int j = 0;
        for (; j + 3 <= kernel_cols; j += 3) {
            float x[3][3], k[3][3];
#pragma unroll
            for (int h = 0; h < 3; h++) {
#pragma unroll
                for (int u = 0; u < 3; u++) {
                    x[h][u] = row[h * input_stride + j + u];
                    k[h][u] = taps[h * kernel_cols + j + u];
                }
            }
#pragma unroll
            for (int h = 0; h < 3; h++) {
#pragma unroll
                for (int u = 0; u < 3; u++) {
                    sum += x[h][u] * k[h][u];
                }
            }
        }
        for (; j < kernel_cols; j++) {
            float x0 = row[j], x1 = row[input_stride + j], x2 = row[2 * input_stride + j];
            float k0 = taps[j], k1 = taps[kernel_cols + j], k2 = taps[2 * kernel_cols + j];
            sum += x0 * k0;
            sum += x1 * k1;
            sum += x2 * k2;
        }
    }
    for (; i < kernel_rows; i++) {
        const float* row = input + (r + i) * input_stride + c;
        for (int j = 0; j < kernel_cols; j++) {
            sum += row[j] * kernel[i * kernel_cols + j];
        }
    }
#endif
    output[r * output_stride + c] = sum;
}
