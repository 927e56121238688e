// SPDX-License-Identifier: MIT
/* libFuzzer target: the dtrace collapse parser (the body: collapse_target.h). */
#define FUZZ_COLLAPSE_FORMAT COLLAPSE_FORMAT_DTRACE
#include "collapse_target.h"
