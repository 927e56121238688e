// SPDX-License-Identifier: MIT
/* libFuzzer target: the perf collapse parser (the body: collapse_target.h). */
#define FUZZ_COLLAPSE_FORMAT COLLAPSE_FORMAT_PERF
#include "collapse_target.h"
