// The workbook's <assert.h> for NVRTC, which already defines the device `assert` (a failed one
// calls `__assertfail`, which traps); this header lets `#include <assert.h>` compile.
#pragma once
