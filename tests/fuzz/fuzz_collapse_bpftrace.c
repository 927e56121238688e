// SPDX-License-Identifier: MIT
/* libFuzzer target: the bpftrace collapse parser (the body: collapse_target.h). */
#define FUZZ_COLLAPSE_FORMAT COLLAPSE_FORMAT_BPFTRACE
#include "collapse_target.h"
