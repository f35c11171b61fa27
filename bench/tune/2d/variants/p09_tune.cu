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
#endif
    output[r * output_stride + c] = sum;
}
