// SPDX-License-Identifier: MIT
/*
 * offcpu_nofp: tests/workloads/offcpu.c built as distributions build, -O2 without frame pointers
 * (the Makefile's WORKLOAD_offcpu_nofp_CFLAGS): its blocked stacks reach main only through the
 * CFI walker. Same usage and output as offcpu.
 */
#include "offcpu.c"
