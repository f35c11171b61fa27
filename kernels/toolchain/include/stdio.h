// The workbook's <stdio.h> for NVRTC, which ships no C library headers. On the device only
// `printf` exists, and NVRTC already declares it; this header lets `#include <stdio.h>` compile.
#pragma once
